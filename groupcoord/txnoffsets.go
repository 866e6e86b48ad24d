package groupcoord

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sediment-io/sediment/metadata"
)

// TxnCommitRequest is a TxnOffsetCommit: offsets committed inside a
// transaction (KIP-98). From v3 on (KIP-447) it carries the generation,
// member id and group instance id, checked as an OffsetCommit's; older
// versions give generation -1 and no member, and are not checked.
type TxnCommitRequest struct {
	CommitRequest
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
}

// pendingOffset is one offset committed inside an open transaction, as
// durable in metadata; visible once the transaction commits.
type pendingOffset struct {
	metadata.PendingOffset
}

// txnFenceEntries bounds how many producers' completed epochs a group
// remembers (txnFences): past it, those older than maxTxnFenceAge are
// forgotten, as a producer whose transaction ended that long ago is
// gone.
const (
	txnFenceEntries = 1024
	maxTxnFenceAge  = 15 * time.Minute // transaction.max.timeout.ms's default
)

// txnFence is the producer epoch of the last transaction of a producer
// completed in a group, and when.
type txnFence struct {
	epoch int16
	at    time.Time
}

// TxnCommit validates a transactional commit and makes its offsets durable
// as pending for (group, producer id); the result arrives once they are.
// FetchOffsets does not return them until CompleteTxn commits the
// transaction, and CompleteTxn drops them if it aborts. A newer pending
// commit of the same producer and partition replaces the older one.
func (c *Coordinator) TxnCommit(req TxnCommitRequest) <-chan CommitResult {
	out := make(chan CommitResult, 1)
	g, err := c.commitGroup(req.CommitRequest)
	if err != nil {
		out <- CommitResult{Err: err}
		return out
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.checkTxnCommitLocked(req); err != nil {
		out <- CommitResult{Err: err}
		return out
	}
	g.txnCommitLocked(req, out)
	return out
}

// checkTxnCommitLocked is Kafka's validateOffsetCommit for a transactional
// commit: like checkCommitLocked, except that a commit without generation
// and member is accepted whatever the group's state (the old versions
// carry neither), a rebalance in progress does not refuse it, and the
// member's session is not renewed by it. A producer epoch older than one
// the producer's pending offsets or last completed transaction in the
// group hold is fenced, as Kafka's log of the group's partition fences it.
func (g *group) checkTxnCommitLocked(req TxnCommitRequest) error {
	switch {
	case g.released:
		return ErrNotCoordinator
	case g.state == StateDead:
		return ErrCoordinatorNotAvailable
	case req.ProducerID < 0:
		return fmt.Errorf("groupcoord: group %q: producer id %d: %w", g.id, req.ProducerID, kerr.InvalidProducerIDMapping)
	case req.Generation < 0 && g.state == StateEmpty:
	case req.Generation < 0 && req.MemberID == "" && req.InstanceID == nil:
	default:
		if _, err := g.memberForLocked(req.MemberID, req.InstanceID); err != nil {
			return err
		}
		if req.Generation != g.generation {
			return ErrIllegalGeneration
		}
	}
	if epoch, ok := g.producerEpochLocked(req.ProducerID); ok && req.ProducerEpoch < epoch {
		return fmt.Errorf("groupcoord: group %q: producer %d epoch %d, fenced by epoch %d: %w",
			g.id, req.ProducerID, req.ProducerEpoch, epoch, kerr.ProducerFenced)
	}
	return nil
}

// producerEpochLocked is the newest epoch of producer pid the group knows
// of: of its pending offsets, or of its last completed transaction.
func (g *group) producerEpochLocked(pid int64) (int16, bool) {
	f, ok := g.txnFences[pid]
	epoch := f.epoch
	for _, p := range g.txnOffsets[pid] {
		if !ok || p.ProducerEpoch > epoch {
			epoch, ok = p.ProducerEpoch, true
		}
	}
	return epoch, ok
}

// txnCommitLocked checks each offset and makes the good ones durable as
// pending.
func (g *group) txnCommitLocked(req TxnCommitRequest, out chan CommitResult) {
	s := g.c.settings()
	now := g.c.clock.Now().UnixMilli()
	errs := make([]error, len(req.Offsets))
	var writes []metadata.TxnOffsetWrite
	var written []int
	for _, v := range g.checkOffsetsLocked(s, req.Offsets, errs) {
		o := req.Offsets[v.i]
		writes = append(writes, metadata.TxnOffsetWrite{ProducerID: req.ProducerID,
			GroupPartition: metadata.GroupPartition{Topic: o.Topic, Partition: o.Partition},
			Offset: &metadata.PendingOffset{ProducerEpoch: req.ProducerEpoch, CommittedOffset: metadata.CommittedOffset{
				TopicID: v.id, Offset: o.Offset, LeaderEpoch: o.LeaderEpoch, Metadata: v.md, CommitMs: now}}})
		written = append(written, v.i)
	}
	if len(writes) == 0 {
		out <- CommitResult{Partitions: errs}
		return
	}
	ranges := cutRanges(len(writes), maxChangeOffsets, func(i int) int { return txnWriteBytes(writes[i]) })
	g.queueSplitLocked(ranges, len(writes), func(start, end int) metadata.GroupWrite {
		return metadata.GroupWrite{TxnOffsets: writes[start:end]}
	}, func(werrs []error) {
		for j, i := range written {
			errs[i] = werrs[j]
		}
		out <- CommitResult{Partitions: errs}
	})
}

// CompleteTxn ends producer pid's transaction in every group of shard that
// holds pending offsets of it: on commit they become the committed offsets
// (each unless a later plain commit of its partition is newer, as Kafka
// keeps the most recent), on abort they are dropped; either way together
// with deleting them from the pending ones. It returns once that is
// durable. Repeating it after completion does nothing. A marker epoch
// older than the pending offsets' is refused (kerr.InvalidProducerEpoch).
// ErrNotCoordinator: the shard is not served here.
func (c *Coordinator) CompleteTxn(ctx context.Context, shard int32, pid int64, epoch int16, commit bool) error {
	if c.closed.Load() {
		return ErrNotCoordinator
	}
	if shard < 0 || shard >= Shards {
		return fmt.Errorf("groupcoord: complete transaction: shard %d outside [0, %d)", shard, Shards)
	}
	c.mu.Lock()
	o := c.shards[shard]
	c.mu.Unlock()
	if o == nil || o.releasing.Load() || !c.fenceValid(o) {
		return ErrNotCoordinator
	}
	var waits []chan error
	for _, g := range c.txnGroups(o, pid) {
		done := make(chan error, 1)
		g.mu.Lock()
		g.completeTxnLocked(pid, epoch, commit, done)
		g.mu.Unlock()
		waits = append(waits, done)
	}
	for _, w := range waits {
		select {
		case err := <-w:
			if err != nil {
				return err
			}
		case <-ctx.Done():
			return fmt.Errorf("groupcoord: complete transaction of producer %d: %w", pid, ctx.Err())
		}
	}
	return nil
}

// completeTxnLocked ends pid's transaction in g and sends the outcome to
// done once durable (nil at once when g holds no pending offset of pid).
// Pending offsets in flight may be pid's, and a plain commit in flight may
// be newer than one of pid's: it waits for them first, so that none lands
// after the transaction ended.
func (g *group) completeTxnLocked(pid int64, epoch int16, commit bool, done chan error) {
	switch {
	case g.released:
		done <- ErrNotCoordinator
		return
	case g.txnInflight[pid] > 0 || (g.inflight > 0 && len(g.txnOffsets[pid]) > 0):
		g.stableWaiters = append(g.stableWaiters, func() { g.completeTxnLocked(pid, epoch, commit, done) })
		return
	}
	pending := g.txnOffsets[pid]
	if len(pending) == 0 {
		done <- nil
		return
	}
	if e, _ := g.producerEpochLocked(pid); epoch < e {
		done <- fmt.Errorf("groupcoord: group %q: marker of producer %d epoch %d older than its epoch %d: %w",
			g.id, pid, epoch, e, kerr.InvalidProducerEpoch)
		return
	}
	tps := make([]metadata.GroupPartition, 0, len(pending))
	for tp := range pending {
		tps = append(tps, tp)
	}
	sortPartitions(tps)
	changes := g.completionLocked(pid, tps, commit)
	ranges := make([][2]int, len(changes))
	for i := range changes {
		ranges[i] = [2]int{i, i + 1}
	}
	g.queueSplitLocked(ranges, len(changes), func(start, _ int) metadata.GroupWrite { return changes[start] }, func(errs []error) {
		for _, err := range errs {
			if err != nil {
				done <- err
				return
			}
		}
		g.mu.Lock()
		g.fenceTxnLocked(pid, epoch)
		g.mu.Unlock()
		result := "abort"
		if commit {
			result = "commit"
		}
		g.c.m.txnsCompleted.WithLabelValues(result).Inc()
		done <- nil
	})
	// Debug: a transactional workload completes many a second.
	g.c.lg.Debug("group transaction completing", "group", g.id, "producer_id", pid, "producer_epoch", epoch,
		"commit", commit, "offsets", len(tps))
}

// completionLocked is the changes that end pid's transaction in g: one
// when they fit in a metadata transaction (dropping every pending offset
// of pid), else several, each storing some offsets and deleting those from
// the pending ones; a crash between them leaves the rest pending, and the
// transaction coordinator completes it again.
func (g *group) completionLocked(pid int64, tps []metadata.GroupPartition, commit bool) []metadata.GroupWrite {
	if !commit {
		return []metadata.GroupWrite{{DropTxn: []int64{pid}}}
	}
	pending := g.txnOffsets[pid]
	materialise := func(tp metadata.GroupPartition) []metadata.OffsetWrite {
		p := pending[tp]
		if cur := g.offsets[tp]; cur != nil && cur.CommitMs > p.CommitMs {
			return nil // a plain commit after the transactional one wins
		}
		off := p.CommittedOffset
		return []metadata.OffsetWrite{{GroupPartition: tp, Offset: &off}}
	}
	bytes := func(i int) int {
		return 2 * txnWriteBytes(metadata.TxnOffsetWrite{Offset: &pending[tps[i]].PendingOffset})
	}
	if len(tps) < maxChangeOffsets && cutRanges(len(tps), len(tps), bytes)[0][1] == len(tps) {
		w := metadata.GroupWrite{DropTxn: []int64{pid}}
		for _, tp := range tps {
			w.Offsets = append(w.Offsets, materialise(tp)...)
		}
		return []metadata.GroupWrite{w}
	}
	var out []metadata.GroupWrite
	for _, r := range cutRanges(len(tps), (maxChangeOffsets-1)/2, bytes) {
		var w metadata.GroupWrite
		for _, tp := range tps[r[0]:r[1]] {
			w.Offsets = append(w.Offsets, materialise(tp)...)
			w.TxnOffsets = append(w.TxnOffsets, metadata.TxnOffsetWrite{ProducerID: pid, GroupPartition: tp})
		}
		out = append(out, w)
	}
	return out
}

// fenceTxnLocked remembers that pid's transaction of epoch completed, so
// that a later commit of an older epoch (a zombie's) is fenced.
func (g *group) fenceTxnLocked(pid int64, epoch int16) {
	now := g.c.clock.Now()
	if g.txnFences == nil {
		g.txnFences = map[int64]txnFence{}
	}
	if len(g.txnFences) >= txnFenceEntries {
		for id, f := range g.txnFences {
			if now.Sub(f.at) > maxTxnFenceAge {
				delete(g.txnFences, id)
			}
		}
	}
	if f, ok := g.txnFences[pid]; !ok || epoch >= f.epoch {
		g.txnFences[pid] = txnFence{epoch: epoch, at: now}
	}
}

// txnGroups returns the groups of o with offsets of producer pid's open
// transaction, sorted by id.
func (c *Coordinator) txnGroups(o *shardOwner, pid int64) []*group {
	c.mu.Lock()
	out := make([]*group, 0, len(o.txnGroups[pid]))
	for g := range o.txnGroups[pid] {
		out = append(out, g)
	}
	c.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// indexTxnLocked lists g among the groups of its shard with offsets of
// producer pid's open transaction while it has any, pending or being
// written.
func (g *group) indexTxnLocked(pid int64) {
	open := len(g.txnOffsets[pid]) > 0 || g.txnInflight[pid] > 0
	g.c.mu.Lock()
	defer g.c.mu.Unlock()
	set := g.own.txnGroups[pid]
	switch {
	case open && set == nil:
		g.own.txnGroups[pid] = map[*group]struct{}{g: {}}
	case open:
		set[g] = struct{}{}
	case set != nil:
		delete(set, g)
		if len(set) == 0 {
			delete(g.own.txnGroups, pid)
		}
	}
}

// txnProducers returns the producers whose pending offsets w writes.
func txnProducers(w metadata.GroupWrite) []int64 {
	var out []int64
	for _, o := range w.TxnOffsets {
		if !slices.Contains(out, o.ProducerID) {
			out = append(out, o.ProducerID)
		}
	}
	return out
}

// txnQueuedLocked counts a queued write of pending offsets of pids.
func (g *group) txnQueuedLocked(pids []int64) {
	for _, pid := range pids {
		if g.txnInflight == nil {
			g.txnInflight = map[int64]int{}
		}
		g.txnInflight[pid]++
		g.indexTxnLocked(pid)
	}
}

// txnDoneLocked counts a write of pending offsets of pids done (durable or
// failed). The caller updates the index (indexTxnLocked) once it applied
// the write, so that the group never leaves it in between.
func (g *group) txnDoneLocked(pids []int64) {
	for _, pid := range pids {
		if g.txnInflight[pid]--; g.txnInflight[pid] <= 0 {
			delete(g.txnInflight, pid)
		}
	}
}

// applyTxnOffsetsLocked applies the pending offsets of a durable change in
// memory.
func (g *group) applyTxnOffsetsLocked(w metadata.GroupWrite) {
	for _, pid := range w.DropTxn {
		delete(g.txnOffsets, pid)
		g.indexTxnLocked(pid)
	}
	for _, o := range w.TxnOffsets {
		byTP := g.txnOffsets[o.ProducerID]
		if o.Offset == nil {
			delete(byTP, o.GroupPartition)
			if len(byTP) == 0 {
				delete(g.txnOffsets, o.ProducerID)
			}
			continue
		}
		if byTP == nil {
			if g.txnOffsets == nil {
				g.txnOffsets = map[int64]map[metadata.GroupPartition]*pendingOffset{}
			}
			byTP = map[metadata.GroupPartition]*pendingOffset{}
			g.txnOffsets[o.ProducerID] = byTP
		}
		byTP[o.GroupPartition] = &pendingOffset{*o.Offset}
	}
	for _, pid := range txnProducers(w) {
		g.indexTxnLocked(pid)
	}
}

// hasTxnOffsetsLocked says whether any offset of g is pending in a
// transaction: such a group is neither deleted nor expired.
func (g *group) hasTxnOffsetsLocked() bool { return len(g.txnOffsets) > 0 }

// unstableLocked says whether a partition has offsets pending in an open
// transaction of any producer.
func (g *group) unstableLocked(tp metadata.GroupPartition) bool {
	for _, byTP := range g.txnOffsets {
		if byTP[tp] != nil {
			return true
		}
	}
	return false
}

// sortPartitions sorts partitions by topic and partition.
func sortPartitions(tps []metadata.GroupPartition) {
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
}

// errUnstable is a partition's answer to an OffsetFetch with require_stable
// while offsets are pending in a transaction.
func errUnstable(tp metadata.GroupPartition) error {
	return fmt.Errorf("groupcoord: %s-%d has offsets pending in an open transaction: %w", tp.Topic, tp.Partition, kerr.UnstableOffsetCommit)
}
