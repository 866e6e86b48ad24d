package table

import (
	"context"
	"errors"
	"fmt"

	"github.com/sediment-io/sediment/metadata"
)

// In a cluster one broker converts each table topic: the one holding its
// table slot (package cluster). The cluster hands the slot over through
// AcquireTable, ReleaseTable and DropTable; each worker runs under the
// fence its broker held when it started, and checks it before every
// catalog commit (see doc.go for why that and the catalog's own
// concurrency keep a row from being committed twice).

// errNotOwner ends a worker whose broker no longer holds the table's slot
// under the fence the worker started with.
var errNotOwner = errors.New("table: this broker no longer holds the table's slot; another converts it")

// AcquireTable starts converting table topic id here: its slot was just
// acquired. The worker starts at the supervisor's next pass, once the
// topic is known to the log.
func (c *Converter) AcquireTable(_ context.Context, id metadata.TopicID) error {
	c.mu.Lock()
	c.owned[id] = true
	c.mu.Unlock()
	kickChan(c.kick)
	return nil
}

// ReleaseTable stops converting table topic id after the commit in
// flight, if any: what the worker buffered is not committed, and the next
// owner converts it again from the table's offsets. An error (ctx ended
// first) leaves the worker to DropTable.
func (c *Converter) ReleaseTable(ctx context.Context, id metadata.TopicID) error {
	r := c.disown(id)
	if r == nil {
		return nil
	}
	select {
	case r.commit <- struct{}{}:
	case <-r.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("table: release %s: a commit in flight: %w", id, context.Cause(ctx))
	}
	r.cancel()
	<-r.commit
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("table: release %s: %w", id, context.Cause(ctx))
	}
}

// DropTable stops converting table topic id at once: the slot is lost. A
// commit in flight is cut short; if it reaches the catalog anyway, the
// catalog's concurrency decides between it and the next owner's.
func (c *Converter) DropTable(id metadata.TopicID) {
	if r := c.disown(id); r != nil {
		r.cancel()
	}
}

// disown forgets the slot of id and returns its worker, removed from the
// running ones, or nil.
func (c *Converter) disown(id metadata.TopicID) *running {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.owned, id)
	for name, r := range c.workers {
		if r.id == id {
			delete(c.workers, name)
			if st := c.stats[name]; st != nil {
				st.setState("stopped", errNotOwner.Error())
			}
			return r
		}
	}
	return nil
}

// slot says whether this broker converts topic id, and under which
// fence: always on one node, in a cluster while it holds the slot.
func (c *Converter) slot(id metadata.TopicID) (metadata.Cond, bool) {
	if c.opts.Cluster == nil {
		return metadata.Cond{}, true
	}
	c.mu.Lock()
	owned := c.owned[id]
	c.mu.Unlock()
	if !owned {
		return metadata.Cond{}, false
	}
	return c.opts.Cluster.TableFence(id)
}

// checkFence fails with errNotOwner unless this broker still holds the
// table's slot under the fence the worker started with, inside its
// session's local deadline.
func (w *worker) checkFence() error {
	if w.c.opts.Cluster == nil {
		return nil
	}
	f, ok := w.c.opts.Cluster.TableFence(w.topic.ID)
	if !ok || f != w.fence {
		return errNotOwner
	}
	return nil
}

func kickChan(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
