package partition

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sediment-io/sediment/metadata"
)

// applyRetention deletes, for every partition, the oldest committed
// segments that retention.ms or retention.bytes (cleanup.policy=delete
// topics only) or the log start offset (DeleteRecords) puts out of the log,
// and raises the log start offset past them. Only whole segments go, as in
// Kafka; data not yet uploaded is never touched.
func (l *Log) applyRetention(ctx context.Context) error {
	var errs []error
	for _, t := range l.Topics() {
		cfg := t.cfg.Load()
		for _, p := range t.Partitions() {
			if err := l.retainPartition(ctx, p, cfg); err != nil && !metadata.IsConflict(err) {
				errs = append(errs, fmt.Errorf("%s/%d: %w", t.Name, p.index, err))
			}
		}
	}
	return errors.Join(errs...)
}

func (l *Log) retainPartition(ctx context.Context, p *Partition, cfg *topicConfig) error {
	logStart, _ := p.Offsets()
	segs, n, err := l.expiring(ctx, p, logStart, cfg, time.Now())
	if err != nil || n == 0 {
		return err
	}
	newStart := max(logStart, segs[n-1].EndOffset)
	if err := l.meta.DeleteSegments(ctx, p.topic.ID, p.index, segs[:n], newStart, l.opts.GCGrace); err != nil {
		return err
	}
	p.raiseLogStart(newStart)
	l.m.retainedSegments.Add(float64(n))
	l.log.Info("retention deleted segments", "topic", p.topic.Name, "partition", p.index,
		"segments", n, "log_start_offset", newStart)
	return nil
}

// retentionPage is how many index entries expiring reads at a time when
// only the oldest segments can expire; a variable for tests.
var retentionPage = 16

// expiring returns the oldest segments of p, at least those retention
// removes, and how many of them it removes (expiredSegments). Without
// retention.bytes, which needs the size of the whole log, it reads the
// index a page at a time from the start and stops at the first page with a
// segment that stays: a pass then reads one page per partition instead of
// the whole index (with 2,000 partitions and uploads every 250 ms the
// whole-index read was an eighth of the broker's CPU).
func (l *Log) expiring(ctx context.Context, p *Partition, logStart int64, cfg *topicConfig, now time.Time) ([]metadata.Segment, int, error) {
	if cfg.retentionBytes >= 0 && !cfg.compact {
		segs, err := l.meta.Segments(ctx, p.topic.ID, p.index, 0, 0)
		if err != nil {
			return nil, 0, err
		}
		return segs, expiredSegments(segs, logStart, cfg, now), nil
	}
	var segs []metadata.Segment
	for from := int64(0); ; { // each page starts past the last: the index is finite
		page, err := l.meta.Segments(ctx, p.topic.ID, p.index, from, retentionPage)
		if err != nil {
			return nil, 0, err
		}
		segs = append(segs, page...)
		// Only a prefix of the oldest segments expires, so a count short
		// of what was read is the count for the whole index.
		n := expiredSegments(segs, logStart, cfg, now)
		if n < len(segs) || len(page) < retentionPage {
			return segs, n, nil
		}
		from = page[len(page)-1].BaseOffset + 1
	}
}

// expiredSegments returns how many of the oldest segments retention
// removes: those wholly below the log start offset, then, for delete-policy
// topics, those whose newest record is older than retention.ms, then those
// beyond retention.bytes (oldest first, while the rest still reach it).
func expiredSegments(segs []metadata.Segment, logStart int64, cfg *topicConfig, now time.Time) int {
	n := 0
	for n < len(segs) && segs[n].EndOffset <= logStart {
		n++
	}
	if cfg.compact {
		return n
	}
	if cfg.retentionMs >= 0 {
		cutoff := now.UnixMilli() - cfg.retentionMs
		for n < len(segs) && segs[n].MaxTimestamp < cutoff {
			n++
		}
	}
	if cfg.retentionBytes >= 0 {
		var size int64
		for _, s := range segs[n:] {
			size += s.Len
		}
		for n < len(segs) && size-segs[n].Len >= cfg.retentionBytes {
			size -= segs[n].Len
			n++
		}
	}
	return n
}

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
	if err := l.meta.SetLogStartOffset(ctx, p.topic.ID, p.index, offset); err != nil {
		if errors.Is(err, metadata.ErrUnknownTopic) {
			return 0, ErrUnknownPartition
		}
		return 0, fmt.Errorf("%w: %v", ErrStorage, err)
	}
	p.raiseLogStart(offset)
	l.log.Info("records deleted", "topic", p.topic.Name, "partition", p.index, "log_start_offset", offset)
	return offset, nil
}
