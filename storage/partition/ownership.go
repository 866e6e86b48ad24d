package partition

import (
	"context"
	"errors"
	"fmt"

	"github.com/sediment-io/sediment/metadata"
)

// ErrNotLeader: this broker does not own the partition; protocol maps it to
// NOT_LEADER_OR_FOLLOWER.
var ErrNotLeader = errors.New("partition: this broker does not own the partition")

// Ownership is the cluster's answer to "do I own this partition".
// Options.Ownership nil: the log owns every partition, as one node always
// has.
type Ownership interface {
	// Fence returns the condition that holds only while this broker owns
	// the partition; ok is false when it does not own it now.
	Fence(id metadata.TopicID, p int32) (metadata.Cond, bool)
	// Valid reports whether the broker is inside its local lease
	// deadline. Past it the log acknowledges nothing (appends and acks
	// still waiting fail with ErrNotLeader) and serves no fetch as owner.
	Valid() bool
	// Sweeps reports whether this broker runs the orphan and garbage
	// sweep (the controller).
	Sweeps() bool
}

// In a cluster every partition starts not owned. Acquire makes the log its
// owner: it reloads the partition from metadata and takes appends, and the
// uploader commits its segments under the fence Ownership gave. Release
// hands it over gracefully; Drop stops serving it at once. A commit whose
// fence failed Drops the partitions it names.

// CheckLeader returns ErrNotLeader unless this log serves p as its owner
// now: it owns p and, in a cluster, is inside its lease deadline. The
// requests that answer from a partition's state without reading it
// (ListOffsets, OffsetForLeaderEpoch) call it; Append, Read, OffsetForTime
// and DeleteRecords check it themselves.
func (l *Log) CheckLeader(p *Partition) error {
	if l.opts.Ownership == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return l.leadsLocked(p)
}

// leadsLocked is CheckLeader with p.mu held; a deleted partition is
// unknown rather than not led. A partition being released takes no
// appends but still serves reads, so Append checks releasing itself.
func (l *Log) leadsLocked(p *Partition) error {
	if l.opts.Ownership == nil {
		return nil
	}
	if p.deleted {
		return ErrUnknownPartition
	}
	if !p.owned || !l.opts.Ownership.Valid() {
		return fmt.Errorf("%w: %s/%d", ErrNotLeader, p.topic.Name, p.index)
	}
	return nil
}

// ackable returns ErrNotLeader once the broker is past its lease deadline:
// an append durable only then must not be acknowledged by a broker that
// may already have lost the partition.
func (l *Log) ackable(p *Partition) error {
	if l.opts.Ownership == nil || l.opts.Ownership.Valid() {
		return nil
	}
	return fmt.Errorf("%w: %s/%d: past the lease deadline", ErrNotLeader, p.topic.Name, p.index)
}

// partitionOf returns the live partition, or ErrUnknownPartition.
func (l *Log) partitionOf(id metadata.TopicID, idx int32) (*Partition, error) {
	if t, ok := l.TopicByID(id); ok {
		if p := t.Partition(idx); p != nil {
			return p, nil
		}
	}
	return nil, fmt.Errorf("%w: %s/%d", ErrUnknownPartition, id, idx)
}

// fenceOf returns p's fence for a metadata write (none on one node).
func (p *Partition) fenceOf() []metadata.Cond {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fence == nil {
		return nil
	}
	return []metadata.Cond{*p.fence}
}

// Acquire makes the log the partition's owner, right after the own key was
// written: it reloads the partition's committed state, producers and
// leader epochs from metadata (from metadata alone, no object read) and
// takes appends from then on. WAL batches of the partition kept from an
// earlier ownership (recovered at Open, or kept by Drop under wal
// durability) commit under the new fence when they still continue the
// committed log: it ends where they start, and the leader-epoch history
// says their epochs run to their end (metadata.KeptBatches). Otherwise
// another owner led the partition meanwhile, or a forced takeover gave
// them up, and they are reset like a partition whose segment cannot
// commit. The own key's writer passes Kept to
// metadata.AcquirePartitionKeeping, which starts the new epoch at their
// end when they continue the log. A partition this log does not know yet
// is looked up in metadata first (SyncTopics).
func (l *Log) Acquire(ctx context.Context, id metadata.TopicID, idx int32) error {
	if l.opts.Ownership == nil {
		return nil
	}
	fence, ok := l.opts.Ownership.Fence(id, idx)
	if !ok {
		return fmt.Errorf("partition: acquire %s/%d: %w: no fence", id, idx, ErrNotLeader)
	}
	p, err := l.partitionOf(id, idx)
	if err != nil {
		if serr := l.SyncTopics(ctx); serr != nil {
			return fmt.Errorf("partition: acquire %s/%d: %w", id, idx, serr)
		}
		if p, err = l.partitionOf(id, idx); err != nil {
			return err
		}
	}
	u := l.up
	u.step.Lock() // no commit of p while its state is replaced
	defer u.step.Unlock()
	u.applyDrops()
	fresh, epochs, err := l.loadCommitted(ctx, p)
	if err != nil {
		return err
	}
	for _, f := range u.queue { // cut under an earlier fence: taken again under this one
		u.inflight -= f.remove(p)
	}
	if gap := p.adopt(fresh, epochs, fence); gap != nil {
		u.resetPartition(p, gap)
	}
	if err := l.restartEpochPast(ctx, p, epochs, fresh.committed); err != nil {
		return err
	}
	u.markAgain(p)
	l.log.Info("partition acquired", "topic", p.topic.Name, "partition", idx,
		"epoch", epochs.Current().Epoch, "next_offset", fresh.next, "fence_version", fence.Version)
	return nil
}

// loadCommitted reads p's committed state, producers and leader epochs
// from metadata into a fresh partition value.
func (l *Log) loadCommitted(ctx context.Context, p *Partition) (*Partition, metadata.LeaderEpochs, error) {
	id, idx := p.topic.ID, p.index
	st, ok, err := l.meta.PartitionState(ctx, id, idx)
	if err != nil {
		return nil, metadata.LeaderEpochs{}, fmt.Errorf("partition: acquire %s/%d: %w", p.topic.Name, idx, err)
	}
	if !ok {
		return nil, metadata.LeaderEpochs{}, fmt.Errorf("%w: %s/%d", ErrUnknownPartition, p.topic.Name, idx)
	}
	list, err := l.meta.ProducerStates(ctx, id, idx)
	if err != nil {
		return nil, metadata.LeaderEpochs{}, fmt.Errorf("partition: acquire producers of %s/%d: %w", p.topic.Name, idx, err)
	}
	epochs, err := l.meta.LeaderEpochs(ctx, id, idx)
	if err != nil {
		return nil, metadata.LeaderEpochs{}, fmt.Errorf("partition: acquire %s/%d: %w", p.topic.Name, idx, err)
	}
	fresh := newPartition(p.topic, idx, st)
	fresh.producers = loadProducers(list)
	fresh.producers.expire(l.producerExpireBefore())
	return fresh, epochs, nil
}

// adopt makes p owned under fence with the committed state in fresh. It
// keeps p's uncommitted batches, and the producer state that includes
// them, when they continue the committed log under the leader epochs the
// acquisition wrote; it returns the reason to reset p otherwise. Called
// with the uploader's step held.
func (p *Partition) adopt(fresh *Partition, epochs metadata.LeaderEpochs, fence metadata.Cond) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.owned, p.releasing, p.fence = true, false, &fence
	p.epochs = epochs
	kept := len(p.refs) > p.firstNew
	if p.offline {
		return nil // a reset waits for the WAL release; its reload reads metadata again
	}
	if kept && p.keptLocked().Continues(epochs, fresh.committed) {
		p.logStart = max(p.logStart, fresh.logStart)
		p.upSent = p.committed
		return nil
	}
	if kept {
		return fmt.Errorf("partition: %s/%d: %d kept batches [%d,%d) no longer continue the log, which ends at %d at epoch %d from %d",
			p.topic.Name, p.index, len(p.refs)-p.firstNew, p.committed, p.next, fresh.committed,
			epochs.Current().Epoch, epochs.Current().StartOffset)
	}
	p.logStart, p.hw, p.next, p.committed = fresh.logStart, fresh.hw, fresh.next, fresh.committed
	p.upSent = fresh.committed
	p.producers, p.producersUnread = fresh.producers, false
	p.refs, p.firstNew = nil, 0
	p.wakeLocked()
	return nil
}

// restartEpochPast starts a new epoch at the committed offset when the
// acquisition started the current one past it while p goes on from there
// (what it kept was not what the acquisition was told): appends stamped
// with an epoch that the history starts later would read as diverged.
func (l *Log) restartEpochPast(ctx context.Context, p *Partition, epochs metadata.LeaderEpochs, committed int64) error {
	p.mu.Lock()
	next := p.next
	p.mu.Unlock()
	if start := epochs.Current().StartOffset; start <= committed || start <= next {
		return nil
	}
	if _, err := l.BumpLeaderEpoch(ctx, p); err != nil {
		return fmt.Errorf("partition: acquire %s/%d: restart the epoch at %d: %w", p.topic.Name, p.index, committed, err)
	}
	return nil
}

// Release hands the partition over: it refuses new appends (ErrNotLeader),
// waits until every batch of the partition already taken is committed (or
// ctx ends: then an error, and the caller drops instead), then stops
// serving it as owner. The caller deletes the own key after. A partition
// of a deleted topic has nothing to hand over.
func (l *Log) Release(ctx context.Context, id metadata.TopicID, idx int32) error {
	if l.opts.Ownership == nil {
		return nil
	}
	p, err := l.partitionOf(id, idx)
	if errors.Is(err, ErrUnknownPartition) {
		return nil // deleted: there is nothing left to hand over
	}
	if err != nil {
		return err
	}
	p.mu.Lock()
	if !p.owned {
		p.mu.Unlock()
		return nil
	}
	p.releasing = true
	p.mu.Unlock()
	signal(l.up.kick)
	for {
		p.mu.Lock()
		done, lost := p.committed >= p.next || p.deleted, !p.owned
		ch := p.commitSignalLocked()
		p.mu.Unlock()
		if lost { // dropped meanwhile: nothing is handed over
			return fmt.Errorf("partition: release %s/%d: %w: ownership lost during the hand-over", p.topic.Name, idx, ErrNotLeader)
		}
		if done {
			break
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("partition: release %s/%d: %w", p.topic.Name, idx, ctx.Err())
		}
	}
	p.mu.Lock()
	p.owned, p.releasing, p.fence = false, false, nil
	p.mu.Unlock()
	l.log.Info("partition released", "topic", p.topic.Name, "partition", idx)
	return nil
}

// commitSignalLocked returns a channel closed at p's next commit,
// truncation or drop.
func (p *Partition) commitSignalLocked() chan struct{} {
	if p.committedCh == nil {
		p.committedCh = make(chan struct{})
	}
	return p.committedCh
}

// signalCommitLocked wakes whoever waits in Release.
func (p *Partition) signalCommitLocked() {
	if p.committedCh != nil {
		close(p.committedCh)
		p.committedCh = nil
	}
}

// Drop stops serving the partition at once: its ownership was lost without
// a hand-over (lease expired, fence failed). Under object durability its
// uncommitted batches (never acknowledged) are dropped and their producers
// get ErrNotLeader. Under wal durability they are kept (acknowledged) and
// commit when the partition is owned again, or are reset on a gap.
func (l *Log) Drop(id metadata.TopicID, idx int32) {
	if l.opts.Ownership == nil {
		return
	}
	p, err := l.partitionOf(id, idx)
	if err != nil {
		return
	}
	u := l.up
	p.mu.Lock()
	p.owned, p.releasing, p.fence = false, false, nil
	if l.opts.Durability == DurabilityObject {
		p.abandonWaitersLocked()
	}
	p.mu.Unlock()
	if !u.step.TryLock() {
		// The uploader is inside a step (a commit to an unreachable
		// metadata store may take long): it drops p at its next one.
		u.mu.Lock()
		u.drops = append(u.drops, p)
		u.mu.Unlock()
		return
	}
	defer u.step.Unlock()
	u.dropPartition(p, ErrNotLeader)
}

// abandonWaitersLocked fails, with ErrNotLeader, the producers waiting for
// p's batches not yet committed (object durability: none is acknowledged),
// before the uploader takes the batches out: a drop answers at once even
// while a commit holds the uploader.
func (p *Partition) abandonWaitersLocked() {
	p.resets++
	p.truncatedAt = p.committed
	p.truncateErr = fmt.Errorf("%w: %s/%d: ownership lost before the batch committed", ErrNotLeader, p.topic.Name, p.index)
	p.wakeLocked()
}

// applyDrops drops the partitions Drop left to the uploader, unless owned
// again since. Called with step held, at the start of every step.
func (u *uploader) applyDrops() {
	u.mu.Lock()
	drops := u.drops
	u.drops = nil
	u.mu.Unlock()
	for _, p := range drops {
		p.mu.Lock()
		owned := p.owned
		p.mu.Unlock()
		if !owned {
			u.dropPartition(p, ErrNotLeader)
		}
	}
}

// dropPartition takes p, no longer owned, out of every object not yet
// committed. Under object durability its uncommitted batches go and their
// waiters get cause; under wal durability they stay, to be taken again
// once p is owned again. Called with step held.
func (u *uploader) dropPartition(p *Partition, cause error) {
	for _, f := range u.queue {
		u.inflight -= f.remove(p)
	}
	if u.l.opts.Durability == DurabilityWAL {
		p.mu.Lock()
		p.upSent = p.committed
		p.signalCommitLocked()
		kept := len(p.refs) - p.firstNew
		p.mu.Unlock()
		u.markAgain(p) // its frames hold the WAL until they commit
		u.l.log.Warn("partition dropped; its uncommitted batches are kept for its next ownership",
			"topic", p.topic.Name, "partition", p.index, "kept_batches", kept, "err", cause)
		return
	}
	p.mu.Lock()
	batches := len(p.refs) - p.firstNew
	p.mu.Unlock()
	dropped, from, to := p.truncate(false, fmt.Errorf("%w: %s/%d: ownership lost before the batch committed",
		ErrNotLeader, p.topic.Name, p.index))
	u.l.m.droppedBatches.Add(float64(batches))
	u.forget(dropped)
	u.mu.Lock()
	delete(u.dirty, p)
	u.mu.Unlock()
	u.l.log.Warn("partition dropped; its uncommitted batches are dropped", "topic", p.topic.Name,
		"partition", p.index, "dropped_offsets", fmt.Sprintf("[%d,%d)", from, to), "dropped_bytes", dropped, "err", cause)
}

// dropNotOwned drops the partitions of the object at the head of the queue
// that a commit's failed fence names. Called with step held.
func (u *uploader) dropNotOwned(no *metadata.NotOwnerError) {
	for _, k := range no.Partitions {
		for _, p := range u.queue[0].up.parts {
			if p.topic.ID == k.Topic && p.index == k.Partition {
				p.mu.Lock()
				p.owned, p.releasing, p.fence = false, false, nil
				p.mu.Unlock()
				u.dropPartition(p, no)
				break
			}
		}
	}
}
