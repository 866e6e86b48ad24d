package groupcoord

import (
	"context"
	"fmt"
	"runtime/pprof"
	"sync"

	"github.com/sediment-io/sediment/metadata"
)

// maxWritesPerTxn bounds one metadata transaction of the persister.
const maxWritesPerTxn = 512

// writeReq is one group change waiting for the persister.
type writeReq struct {
	w metadata.GroupWrite
	// apply runs on the persister goroutine once the change is durable
	// (err nil) or failed, in the order the changes were queued. It takes
	// the group's lock itself.
	apply func(err error)
}

// persister makes group changes durable: one goroutine takes every queued
// change and writes them in one transaction (group commit), so a thousand
// commits pending at once cost one metadata write, not a thousand.
type persister struct {
	c     *Coordinator
	fence int64
	// versions is each group record's version in metadata (absent: no
	// record). Only the run goroutine uses it once it started.
	versions map[string]int64

	mu     sync.Mutex // guards queue and closed
	queue  []*writeReq
	closed bool

	kick chan struct{} // one slot: there is work
	done chan struct{} // closed when run returns
}

func newPersister(c *Coordinator, fence int64, versions map[string]int64) *persister {
	p := &persister{c: c, fence: fence, versions: versions, kick: make(chan struct{}, 1), done: make(chan struct{})}
	go pprof.Do(context.Background(), pprof.Labels("sediment", "groupcoord-persister"), func(context.Context) {
		defer close(p.done)
		p.run()
	})
	return p
}

// enqueue queues a change. It never blocks and never calls apply itself,
// so callers may hold a group's lock; it fails once the persister closed.
func (p *persister) enqueue(r *writeReq) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrNotCoordinator
	}
	p.queue = append(p.queue, r)
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
	return nil
}

// close writes what is queued and stops the goroutine.
func (p *persister) close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
	<-p.done
	return nil
}

// take removes and returns everything queued, and whether the persister
// is closed.
func (p *persister) take() ([]*writeReq, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	q := p.queue
	p.queue = nil
	return q, p.closed
}

func (p *persister) run() {
	for range p.kick {
		for {
			batch, closed := p.take()
			if len(batch) == 0 {
				if closed {
					return
				}
				break
			}
			for len(batch) > 0 {
				n := min(len(batch), maxWritesPerTxn)
				p.flush(batch[:n])
				batch = batch[n:]
			}
		}
	}
}

// flush writes one batch. When a batch of several fails, each change is
// tried alone, so that one bad change never fails the others.
func (p *persister) flush(batch []*writeReq) {
	err := p.write(batch)
	if err != nil && len(batch) > 1 {
		for _, r := range batch {
			p.flush([]*writeReq{r})
		}
		return
	}
	for _, r := range batch {
		r.apply(err)
	}
}

// write makes batch durable in one transaction and tracks the record
// versions it produced.
func (p *persister) write(batch []*writeReq) error {
	writes := make([]metadata.GroupWrite, len(batch))
	for i, r := range batch {
		writes[i] = r.w
	}
	rev, err := p.c.meta.WriteGroups(context.Background(), p.fence, p.versions, writes)
	if err != nil {
		if metadata.IsConflict(err) {
			p.refresh(writes)
		}
		p.c.lg.Warn("group changes not stored", "changes", len(batch), "err", err)
		return fmt.Errorf("groupcoord: store group changes: %w: %w", ErrCoordinatorNotAvailable, err)
	}
	for _, w := range writes {
		if w.Delete {
			delete(p.versions, w.Group)
		}
		if w.Record != nil {
			p.versions[w.Group] = rev
		}
	}
	p.c.m.persistTxns.Inc()
	return nil
}

// refresh re-reads the record versions of the groups of a failed batch
// after a lost compare-and-swap, so that one surprise does not fail every
// later write of those groups. A moved fence means another coordinator
// took over: that is logged, and every write fails from then on.
func (p *persister) refresh(writes []metadata.GroupWrite) {
	for _, w := range writes {
		v, err := p.c.meta.GroupVersion(context.Background(), w.Group)
		if err != nil {
			return
		}
		if v == 0 {
			delete(p.versions, w.Group)
		} else {
			p.versions[w.Group] = v
		}
	}
	p.c.lg.Error("group coordinator lost a compare-and-swap: another writer changed group metadata (or fenced this coordinator)",
		"groups", len(writes))
}

// writeRecord is the change that stores a group's record.
func writeRecord(id string, rec *metadata.GroupRecord) metadata.GroupWrite {
	return metadata.GroupWrite{Group: id, Record: rec}
}

// deleteGroupWrite is the change that deletes a group and its offsets.
func deleteGroupWrite(id string) metadata.GroupWrite {
	return metadata.GroupWrite{Group: id, Delete: true}
}
