package partition

import (
	"context"
	"errors"
	"fmt"

	"github.com/sediment-io/sediment/metadata"
)

// EpochView is a consistent snapshot of a partition's leader epochs and
// offsets, for the requests that answer with epochs (Metadata, ListOffsets,
// Fetch, OffsetForLeaderEpoch).
type EpochView struct {
	// Epochs is the leader-epoch history as seen from LogStart: an epoch
	// that started below the log start starts there (Kafka truncates its
	// leader-epoch cache from the start the same way).
	Epochs metadata.LeaderEpochs
	// LogStart is the log start offset, HighWatermark the end of what
	// consumers may read, and LogEnd the offset the next append gets
	// (Kafka's log end offset, the end of the current epoch).
	LogStart, HighWatermark, LogEnd int64
}

// Current returns the current leader epoch and the offset it started at.
func (v EpochView) Current() metadata.EpochEntry { return v.Epochs.Current() }

// LeaderEpoch returns the partition's current leader epoch.
func (p *Partition) LeaderEpoch() int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.epochs.Current().Epoch
}

// EpochView returns a snapshot of the partition's epochs and offsets.
func (p *Partition) EpochView() EpochView {
	p.mu.Lock()
	defer p.mu.Unlock()
	return EpochView{Epochs: p.epochs.TruncateFromStart(p.logStart), LogStart: p.logStart,
		HighWatermark: p.hw, LogEnd: p.next}
}

// BumpLeaderEpoch starts p's next leader epoch at its log end offset,
// durably, and returns it. A change of the partition's owner calls it; the
// new epoch fences clients still on the old one, and the batches appended
// from now on carry it. The partition lock is held across the metadata
// write so that no append lands between reading the log end and starting
// the epoch there; a bump is rare, and appends wait for it.
func (l *Log) BumpLeaderEpoch(ctx context.Context, p *Partition) (int32, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.deleted {
		return 0, ErrUnknownPartition
	}
	h, err := l.meta.BumpLeaderEpoch(ctx, p.topic.ID, p.index, p.next)
	if errors.Is(err, metadata.ErrUnknownTopic) {
		return 0, ErrUnknownPartition
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrStorage, err)
	}
	p.epochs = h
	l.log.Info("leader epoch bumped", "topic", p.topic.Name, "partition", p.index,
		"epoch", h.Current().Epoch, "start_offset", h.Current().StartOffset)
	return h.Current().Epoch, nil
}
