package partition

import (
	"context"
	"errors"
	"fmt"

	"github.com/sediment-io/sediment/metadata"
)

// raiseLogStart moves the log start offset up to off.
func (p *Partition) raiseLogStart(off int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if off > p.logStart {
		p.logStart = off
	}
}

// DeleteRecords moves p's log start offset to offset (-1: the high
// watermark), as Kafka's DeleteRecords does, and returns the new log start
// (the low watermark). Records below it are unreadable at once; the segments
// holding only such records are deleted by the next retention pass.
func (l *Log) DeleteRecords(ctx context.Context, p *Partition, offset int64) (int64, error) {
	if err := l.CheckLeader(p); err != nil {
		return 0, err
	}
	logStart, hw := p.Offsets()
	if offset == -1 {
		offset = hw
	}
	if offset < 0 || offset > hw {
		return 0, fmt.Errorf("%w: %d not in [%d, %d]", ErrOffsetOutOfRange, offset, logStart, hw)
	}
	if offset <= logStart {
		return logStart, nil
	}
	if err := l.meta.SetLogStartOffset(ctx, p.topic.ID, p.index, offset, p.fenceOf()...); err != nil {
		if errors.Is(err, metadata.ErrUnknownTopic) {
			return 0, ErrUnknownPartition
		}
		if metadata.IsNotOwner(err) {
			return 0, fmt.Errorf("%w: %v", ErrNotLeader, err)
		}
		return 0, fmt.Errorf("%w: %v", ErrStorage, err)
	}
	p.raiseLogStart(offset)
	l.log.Info("records deleted", "topic", p.topic.Name, "partition", p.index, "log_start_offset", offset)
	return offset, nil
}
