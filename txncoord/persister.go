package txncoord

import (
	"context"
	"fmt"
	"slices"

	"github.com/sediment-io/sediment/internal/groupcommit"
	"github.com/sediment-io/sediment/metadata"
)

// Bounds of one metadata transaction: its records (with one condition
// per record and at most one fence per record it stays within etcd's
// default --max-txn-ops, 128) and about their bytes (etcd's default
// --max-request-bytes is 1.5 MiB). A larger record goes alone.
const (
	maxTxnWrites = 63
	maxTxnBytes  = 1 << 20
)

// writeBytes is about what a change adds to a transaction.
func writeBytes(w metadata.TxnWrite) int {
	n := 256 + len(w.ID)
	if w.Record != nil {
		for _, tp := range w.Record.Partitions {
			n += 40 + len(tp.Topic)
		}
		for _, g := range w.Record.Groups {
			n += 8 + len(g)
		}
	}
	return n
}

// txnSize returns how many changes at the head of batch fit in one
// transaction (at least one).
func txnSize(batch []*writeReq) int {
	size := 0
	for i, r := range batch {
		size += writeBytes(r.w)
		if i > 0 && (i == maxTxnWrites || size > maxTxnBytes) {
			return i
		}
	}
	return len(batch)
}

// writeReq is one record change waiting for the persister.
type writeReq struct {
	sh   *shard // the ownership the change is made under
	w    metadata.TxnWrite
	done chan writeResult // one slot: the persister never blocks on it
}

type writeResult struct {
	version int64
	err     error
}

// persister makes record changes durable: one goroutine takes every
// queued change and writes them in one transaction (group commit), so
// that the transitions of many producers at once cost one metadata write.
// Each transaction carries the fences of the shards of its changes.
type persister struct {
	c *Coordinator
	w *groupcommit.Writer[*writeReq]
}

func newPersister(c *Coordinator) *persister {
	p := &persister{c: c}
	p.w = groupcommit.Start("txncoord-persister", txnSize, p.flush)
	return p
}

// write makes w durable under sh's fence and returns the record's new
// version.
func (p *persister) write(sh *shard, w metadata.TxnWrite) (int64, error) {
	r := &writeReq{sh: sh, w: w, done: make(chan writeResult, 1)}
	if !p.w.Add(r, nil) {
		return 0, errNotCoordinator("coordinator closed")
	}
	res := <-r.done
	return res.version, res.err
}

// close writes what is queued and stops the goroutine.
func (p *persister) close() { p.w.Close() }

// flush writes one batch. When a batch of several fails, each change is
// tried alone, so that one stale change never fails the others; except
// after an unknown outcome, which the caller settles by reading back.
// Changes of a shard no longer writable here fail untried.
func (p *persister) flush(batch []*writeReq) {
	live := make([]*writeReq, 0, len(batch))
	for _, r := range batch {
		if p.c.writable(r.sh) {
			live = append(live, r)
		} else {
			r.done <- writeResult{err: errNotCoordinator("shard %d is not owned here any more", r.sh.id)}
		}
	}
	if len(live) == 0 {
		return
	}
	versions, err := p.writeAll(live)
	if err != nil && len(live) > 1 && !metadata.IsUncertain(err) {
		for _, r := range live {
			p.flush([]*writeReq{r})
		}
		return
	}
	for i, r := range live {
		if err != nil {
			r.done <- writeResult{err: err}
		} else {
			r.done <- writeResult{version: versions[i]}
		}
	}
}

// writeAll makes batch durable in one transaction, fenced by the shards
// it touches.
func (p *persister) writeAll(batch []*writeReq) ([]int64, error) {
	writes := make([]metadata.TxnWrite, len(batch))
	var fences []metadata.Cond
	for i, r := range batch {
		writes[i] = r.w
		if !slices.Contains(fences, r.sh.fence) {
			fences = append(fences, r.sh.fence)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	versions, err := p.c.cfg.Meta.WriteTxns(ctx, fences, writes)
	if err != nil {
		return nil, fmt.Errorf("txncoord: store %d transaction records: %w", len(batch), err)
	}
	return versions, nil
}
