package partition

import (
	"context"
	"fmt"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/wal"
)

// A partition whose segment cannot commit (metadata's log of it does not
// end where the segment starts: ErrOffsetGap) has a live log that no longer
// matches its committed one. Retrying cannot help, and holding its batches
// would hold the WAL, and with it every other partition, forever. Like a
// Kafka follower whose log diverged from its leader's, it is truncated to
// the committed log instead:
//
//   - its batches not yet committed are dropped (logged with their offsets,
//     and counted in sediment_upload_partition_resets_total), taken out of
//     every object not yet committed, and the producers still waiting for
//     them get ErrStorage;
//   - it refuses appends (ErrStorage, retriable) until the WAL is released
//     past the dropped batches' frames, so that a restart never replays
//     them into the reset log;
//   - it then reloads its state from metadata and takes appends again from
//     metadata's next offset.

// offlinePartition is a reset partition waiting for the WAL to be released
// past cut, the WAL head when it was reset.
type offlinePartition struct {
	p   *Partition
	cut wal.Pos
}

// reject takes the partitions gap names out of the object at the head of
// the queue and resets them. Called with step held.
func (u *uploader) reject(ctx context.Context, gap *metadata.GapError, cause error) {
	for _, k := range gap.Partitions {
		for _, p := range u.queue[0].up.parts {
			if p.topic.ID == k.Topic && p.index == k.Partition {
				u.resetPartition(p, cause)
				break
			}
		}
	}
}

// resetPartition drops p's batches not yet committed, from every object in
// the queue too, and takes p offline until reopenReset brings it back.
func (u *uploader) resetPartition(p *Partition, cause error) {
	for _, f := range u.queue {
		u.inflight -= f.remove(p)
	}
	dropped, from, to := p.truncate(true, fmt.Errorf("%w: the batch could not be committed and was dropped", ErrStorage))
	u.forget(dropped)
	u.mu.Lock()
	delete(u.dirty, p)
	u.mu.Unlock()
	var cut wal.Pos
	if u.l.wal != nil {
		cut = u.l.wal.Head()
	}
	u.offline = append(u.offline, offlinePartition{p: p, cut: cut})
	u.l.m.partitionResets.Inc()
	u.l.log.Error("partition's segment cannot commit; its uncommitted batches are dropped and it reloads from metadata",
		"topic", p.topic.Name, "partition", p.index, "dropped_offsets", fmt.Sprintf("[%d,%d)", from, to),
		"dropped_bytes", dropped, "err", cause)
}

// remove takes p out of the flight and returns the bytes of its batches.
func (f *flight) remove(p *Partition) int64 {
	up := f.up
	for i, q := range up.parts {
		if q != p {
			continue
		}
		var n int64
		for _, r := range up.refs[i] {
			n += int64(r.size)
		}
		up.parts = append(up.parts[:i:i], up.parts[i+1:]...)
		up.refs = append(up.refs[:i:i], up.refs[i+1:]...)
		up.producers = append(up.producers[:i:i], up.producers[i+1:]...)
		up.fences = append(up.fences[:i:i], up.fences[i+1:]...)
		f.entries = append(f.entries[:i:i], f.entries[i+1:]...)
		up.bytes -= n
		return n
	}
	return 0
}

// truncate drops p's batches not yet committed and wakes whoever waits for
// them, who get cause; offline takes appends off until reload. It returns
// the bytes dropped and their offsets.
func (p *Partition) truncate(offline bool, cause error) (dropped, from, to int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.refs[p.firstNew:] {
		dropped += int64(r.size)
	}
	from, to = p.committed, p.next
	p.refs = p.refs[:p.firstNew]
	p.next, p.upSent = p.committed, p.committed
	p.hw = min(p.hw, p.committed)
	p.offline = p.offline || offline
	p.resets++
	p.truncatedAt = p.committed
	p.truncateErr = cause
	p.wakeLocked()
	p.signalCommitLocked()
	return dropped, from, to
}

// reopenReset reloads from metadata every reset partition whose dropped
// frames the WAL no longer holds (released is where the WAL now starts).
// Called with step held.
func (u *uploader) reopenReset(ctx context.Context, released wal.Pos) error {
	kept := u.offline[:0]
	var err error
	for _, o := range u.offline {
		if o.cut > released || err != nil {
			kept = append(kept, o)
			continue
		}
		if err = u.reload(ctx, o.p); err != nil {
			kept = append(kept, o)
		}
	}
	u.offline = kept
	return err
}

// reload gives p its committed state from metadata and takes appends again.
func (u *uploader) reload(ctx context.Context, p *Partition) error {
	st, ok, err := u.l.meta.PartitionState(ctx, p.topic.ID, p.index)
	if err != nil {
		return fmt.Errorf("partition: reload %s/%d after reset: %w", p.topic.Name, p.index, err)
	}
	list, err := u.l.meta.ProducerStates(ctx, p.topic.ID, p.index)
	if err != nil {
		return fmt.Errorf("partition: reload producers of %s/%d after reset: %w", p.topic.Name, p.index, err)
	}
	fresh := newPartition(p.topic, p.index, st)
	fresh.producers = loadProducers(list)
	fresh.producers.expire(u.l.producerExpireBefore())
	p.mu.Lock()
	defer p.mu.Unlock()
	if ok {
		p.logStart, p.hw, p.next, p.committed = fresh.logStart, fresh.hw, fresh.next, fresh.committed
		p.upSent = fresh.committed
		p.producers, p.producersUnread = fresh.producers, false
		p.refs, p.firstNew = nil, 0
	}
	p.offline = false
	p.wakeLocked()
	u.l.log.Info("reset partition reloaded from metadata", "topic", p.topic.Name, "partition", p.index,
		"next_offset", p.next)
	return nil
}
