package partition

import (
	"context"
	"fmt"

	"github.com/sediment-io/sediment/metadata"
)

// Kept describes the batches of a partition this log holds and has not
// committed, for the own key's writer (metadata.AcquirePartitionKeeping):
// under wal durability, the acknowledged batches recovered at Open or kept
// by Drop. Under object durability none is kept: a drop still waiting for
// the uploader takes them out before Acquire adopts the partition.
func (l *Log) Kept(id metadata.TopicID, idx int32) metadata.KeptBatches {
	p, err := l.partitionOf(id, idx)
	if err != nil || l.opts.Durability != DurabilityWAL {
		return metadata.KeptBatches{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.offline {
		return metadata.KeptBatches{}
	}
	return p.keptLocked()
}

// keptLocked describes p's batches not yet committed: their range and the
// leader epoch runs stamped in them.
func (p *Partition) keptLocked() metadata.KeptBatches {
	refs := p.refs[p.firstNew:]
	if len(refs) == 0 {
		return metadata.KeptBatches{}
	}
	k := metadata.KeptBatches{Start: refs[0].base, End: refs[len(refs)-1].end}
	for _, r := range refs {
		if n := len(k.Epochs); n == 0 || k.Epochs[n-1].Epoch != r.epoch {
			k.Epochs = append(k.Epochs, metadata.EpochEntry{Epoch: r.epoch, StartOffset: r.base})
		}
	}
	return k
}

// DropSuperseded resets the partitions not owned here whose kept batches
// no longer continue their log (metadata.KeptBatches): another owner
// committed past them, or a takeover fenced them. Kept, they would hold
// the WAL, and with it every partition's, until this log owned the
// partition again, which may be never. The own key's writer calls it now
// and then; it reads metadata only for partitions that kept batches. The
// decision is the one the partition's next acquisition makes, so it never
// drops batches an acquisition would keep.
func (l *Log) DropSuperseded(ctx context.Context) error {
	if l.opts.Ownership == nil || l.opts.Durability != DurabilityWAL {
		return nil
	}
	u := l.up
	u.mu.Lock()
	dirty := make([]*Partition, 0, len(u.dirty))
	for p := range u.dirty {
		dirty = append(dirty, p)
	}
	u.mu.Unlock()
	for _, p := range dirty {
		if err := l.dropIfSuperseded(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// dropIfSuperseded resets p if it is not owned and its kept batches no
// longer continue its log. The uploader's step is held across the check,
// so that no acquisition adopts p meanwhile.
func (l *Log) dropIfSuperseded(ctx context.Context, p *Partition) error {
	if k := l.Kept(p.topic.ID, p.index); k.End <= k.Start {
		return nil // cheap check first: most dirty partitions are owned
	}
	u := l.up
	u.step.Lock()
	defer u.step.Unlock()
	p.mu.Lock()
	skip, k := p.owned || p.deleted || p.offline, p.keptLocked()
	p.mu.Unlock()
	if skip || k.End <= k.Start {
		return nil
	}
	st, ok, err := l.meta.PartitionState(ctx, p.topic.ID, p.index)
	if err != nil || !ok {
		return err
	}
	h, err := l.meta.LeaderEpochs(ctx, p.topic.ID, p.index)
	if err != nil {
		return err
	}
	if k.Continues(h, st.NextOffset) {
		return nil
	}
	u.resetPartition(p, fmt.Errorf("partition: %s/%d: kept batches [%d,%d) no longer continue the log, which ends at %d at epoch %d from %d",
		p.topic.Name, p.index, k.Start, k.End, st.NextOffset, h.Current().Epoch, h.Current().StartOffset))
	return nil
}
