package groupcoord

import (
	"context"
	"fmt"
	"slices"

	"github.com/sediment-io/sediment/internal/groupcommit"
	"github.com/sediment-io/sediment/metadata"
)

// Bounds of one metadata transaction of the persister: changes,
// conditions and writes (each; etcd's default --max-txn-ops, which it
// checks separately for both), and the bytes of its offsets (etcd's default
// --max-request-bytes is 1.5 MiB; the rest is room for group records). A
// change larger than that goes alone; no change of offsets is, since one
// carries at most maxChangeOffsets offsets of at most maxTxnOffsetBytes and
// its group's record (queueOffsetsLocked splits a larger commit, and so do
// TxnCommit and CompleteTxn).
const (
	maxWritesPerTxn   = 512
	maxTxnOps         = 128
	maxChangeOffsets  = maxTxnOps - 1
	maxTxnOffsetBytes = 1 << 20
	offsetBytes       = 256 // an offset's key and value besides its metadata
)

// changeRanges cuts writes into ranges [start, end) of at most
// maxChangeOffsets offsets and maxTxnOffsetBytes bytes each (a single
// offset larger than that alone).
func changeRanges(writes []metadata.OffsetWrite) [][2]int {
	return cutRanges(len(writes), maxChangeOffsets, func(i int) int { return writeBytes(writes[i]) })
}

// cutRanges cuts n writes into ranges [start, end) of at most perChange
// writes and maxTxnOffsetBytes bytes (size(i) each) each; a single write
// larger than that goes alone.
func cutRanges(n, perChange int, size func(i int) int) [][2]int {
	var out [][2]int
	start, total := 0, 0
	for i := range n {
		b := size(i)
		if i > start && (i-start == perChange || total+b > maxTxnOffsetBytes) {
			out = append(out, [2]int{start, i})
			start, total = i, 0
		}
		total += b
	}
	if start < n {
		out = append(out, [2]int{start, n})
	}
	return out
}

// writeBytes is about what an offset write adds to a transaction.
func writeBytes(w metadata.OffsetWrite) int {
	if w.Offset == nil {
		return offsetBytes
	}
	return offsetBytes + len(w.Offset.Metadata)
}

// txnWriteBytes is about what a pending offset write adds to a
// transaction.
func txnWriteBytes(w metadata.TxnOffsetWrite) int {
	if w.Offset == nil {
		return offsetBytes
	}
	return offsetBytes + len(w.Offset.Metadata)
}

// changeBytes is about what a change's offsets add to a transaction.
func changeBytes(w metadata.GroupWrite) int {
	n := 0
	for _, o := range w.Offsets {
		n += writeBytes(o)
	}
	for _, o := range w.TxnOffsets {
		n += txnWriteBytes(o)
	}
	return n + offsetBytes*len(w.DropTxn)
}

// writeReq is one group change waiting for the persister.
type writeReq struct {
	own *shardOwner // the ownership the change is made under
	// barrier: no change; apply runs once every change queued before it
	// was applied (ReleaseShard waits on it).
	barrier bool
	w       metadata.GroupWrite
	// apply runs on the persister goroutine once the change is durable
	// (err nil) or failed, in the order the changes were queued. It takes
	// the group's lock itself.
	apply func(err error)
}

// persister makes group changes durable: one goroutine takes every queued
// change and writes them in one transaction (group commit), so a thousand
// commits pending at once cost one metadata write, not a thousand. Each
// transaction carries the fences of the shards its changes belong to.
type persister struct {
	c *Coordinator
	w *groupcommit.Writer[*writeReq]
}

func newPersister(c *Coordinator) *persister {
	p := &persister{c: c}
	p.w = groupcommit.Start("groupcoord-persister", txnSize, p.flush)
	return p
}

// enqueue queues a change. It never blocks and never calls apply itself,
// so callers may hold a group's lock; it fails once the persister closed,
// and for a shard being released or dropped. The check is under the
// writer's lock, so that a release's barrier comes after every change it
// let in.
func (p *persister) enqueue(r *writeReq) error {
	if !p.w.Add(r, func() bool { return !r.own.dropped.Load() && (!r.own.releasing.Load() || r.barrier) }) {
		return ErrNotCoordinator
	}
	return nil
}

// close writes what is queued and stops the goroutine.
func (p *persister) close() error {
	p.w.Close()
	return nil
}

// txnSize returns how many changes at the head of batch fit in one
// transaction.
func txnSize(batch []*writeReq) int {
	conds, ops, size := 0, 0, 0
	groups, fences := map[string]bool{}, map[metadata.Cond]bool{}
	for i, r := range batch {
		c, o, n := 0, 0, 0
		if !r.barrier {
			c, o = changeSize(r, groups, fences)
			n = changeBytes(r.w)
		}
		if i > 0 && (i == maxWritesPerTxn || conds+c > maxTxnOps || ops+o > maxTxnOps || size+n > maxTxnOffsetBytes) {
			return i
		}
		if !r.barrier {
			groups[r.w.Group], fences[r.own.fence] = true, true
		}
		conds, ops, size = conds+c, ops+o, size+n
	}
	return len(batch)
}

// changeSize is the conditions and writes a change adds to a transaction
// already holding groups and fences.
func changeSize(r *writeReq, groups map[string]bool, fences map[metadata.Cond]bool) (conds, ops int) {
	ops = len(r.w.Offsets) + len(r.w.TxnOffsets) + len(r.w.DropTxn)
	if r.w.Record != nil {
		ops++
	}
	if r.w.Delete {
		ops += 3
	}
	if !groups[r.w.Group] {
		conds++
	}
	if !fences[r.own.fence] {
		conds++
	}
	return conds, ops
}

// flush writes one batch. When a batch of several fails, each change is
// tried alone, so that one bad change never fails the others; except after
// an unknown outcome, which is settled by reading back, never by writing
// again. Changes of a shard no longer writable here fail untried.
func (p *persister) flush(batch []*writeReq) {
	live := make([]*writeReq, 0, len(batch))
	for _, r := range batch {
		if !r.barrier && p.c.writable(r.own) {
			live = append(live, r)
		}
	}
	var err error
	if len(live) > 0 {
		err = p.write(live)
	}
	if err != nil && len(live) > 1 && !metadata.IsUncertain(err) {
		for _, r := range batch {
			p.flush([]*writeReq{r})
		}
		return
	}
	i := 0
	for _, r := range batch {
		switch {
		case r.barrier:
			r.apply(nil)
		case i < len(live) && live[i] == r:
			i++
			r.apply(outcome(r, err))
		default:
			r.apply(ErrNotCoordinator)
		}
	}
}

// outcome is the error a written change is answered with: a change of a
// shard dropped because of the failure is answered NOT_COORDINATOR, so
// that its client looks for the new coordinator.
func outcome(r *writeReq, err error) error {
	if err != nil && r.own.dropped.Load() {
		return ErrNotCoordinator
	}
	return err
}

// write makes batch durable in one transaction, fenced by the shards it
// touches, and tracks the record versions it produced.
func (p *persister) write(batch []*writeReq) error {
	writes := make([]metadata.GroupWrite, len(batch))
	versions := map[string]int64{}
	var fences []metadata.Cond
	for i, r := range batch {
		writes[i] = r.w
		if v, ok := r.own.versions[r.w.Group]; ok {
			versions[r.w.Group] = v
		}
		if !slices.Contains(fences, r.own.fence) {
			fences = append(fences, r.own.fence)
		}
	}
	rev, err := p.c.meta.WriteGroups(context.Background(), fences, versions, writes)
	if err != nil {
		if metadata.IsConflict(err) || metadata.IsUncertain(err) {
			p.settle(batch)
		}
		p.c.lg.Warn("group changes not stored", "changes", len(batch), "err", err)
		return fmt.Errorf("groupcoord: store group changes: %w: %w", ErrCoordinatorNotAvailable, err)
	}
	for _, r := range batch {
		if r.w.Delete {
			delete(r.own.versions, r.w.Group)
		}
		if r.w.Record != nil {
			r.own.versions[r.w.Group] = rev
		}
	}
	p.c.m.persistTxns.Inc()
	return nil
}

// settle reads back what a lost compare-and-swap, or a transaction of
// unknown outcome, left: first the fences (a shard whose fence moved was
// taken over: it is dropped, never retried), then the record versions of
// the other groups of the batch, so that one surprise does not fail every
// later write of those groups.
func (p *persister) settle(batch []*writeReq) {
	ctx := context.Background()
	holds := map[metadata.Cond]bool{}
	for _, r := range batch {
		h, checked := holds[r.own.fence]
		if !checked {
			var err error
			if h, err = p.c.meta.GroupFenceHolds(ctx, r.own.fence); err != nil {
				h = true // unknown: the next write reads it again
			}
			holds[r.own.fence] = h
		}
		if !h {
			p.c.lg.Error("group coordinator shard fenced: another coordinator owns it now", "shard", r.own.shard,
				"fence", r.own.fence.Version)
			p.c.dropOwner(r.own, "dropped: its fence moved")
		}
	}
	for _, r := range batch {
		if r.own.dropped.Load() {
			continue
		}
		v, err := p.c.meta.GroupVersion(ctx, r.w.Group)
		if err != nil {
			return
		}
		if v == 0 {
			delete(r.own.versions, r.w.Group)
		} else {
			r.own.versions[r.w.Group] = v
		}
	}
	p.c.lg.Error("group coordinator lost a compare-and-swap (or its outcome is unknown): group metadata was read back",
		"changes", len(batch))
}

// enqueueLocked queues a change of g under the shard ownership g belongs
// to; apply runs once it is durable or failed.
func (g *group) enqueueLocked(w metadata.GroupWrite, apply func(error)) error {
	return g.c.persist.enqueue(&writeReq{own: g.own, w: w, apply: apply})
}

// writeRecord is the change that stores a group's record.
func writeRecord(id string, rec *metadata.GroupRecord) metadata.GroupWrite {
	return metadata.GroupWrite{Group: id, Record: rec}
}

// deleteGroupWrite is the change that deletes a group and its offsets.
func deleteGroupWrite(id string) metadata.GroupWrite {
	return metadata.GroupWrite{Group: id, Delete: true}
}
