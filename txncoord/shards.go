package txncoord

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sediment-io/sediment/metadata"
)

// shard is one coordinator shard as this coordinator owns it: the fence
// every write of its records carries, its coordinator epoch, and its
// transactional ids. A new acquisition is a new shard, so that nothing of
// an earlier one (a write in flight, a marker writer) acts under the new
// fence.
type shard struct {
	id    int32
	fence metadata.Cond
	epoch int32 // the coordinator epoch of this acquisition

	// ctx ends when the shard is released or dropped: marker writers
	// stop, and the next owner completes their transactions.
	ctx    context.Context
	cancel context.CancelFunc
	// wg counts the requests and goroutines acting on the shard. Add is
	// called only under mu while the shard is live, or by a holder of a
	// count: ReleaseShard may wait on it.
	wg sync.WaitGroup

	mu        sync.Mutex // guards txns; releasing and dropped are set under it
	txns      map[string]*txn
	releasing atomic.Bool // ReleaseShard began: new requests are refused
	dropped   atomic.Bool // forgotten: nothing more is written
}

// newShard builds a shard from its stored records; it is not yet served.
func (c *Coordinator) newShard(id int32, fence metadata.Cond, epoch int32, stored []metadata.StoredTxn) (*shard, error) {
	ctx, cancel := context.WithCancel(context.Background())
	sh := &shard{id: id, fence: fence, epoch: epoch, ctx: ctx, cancel: cancel, txns: make(map[string]*txn, len(stored))}
	for _, st := range stored {
		rec, err := recordFromStored(st.Record)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("txncoord: shard %d: transactional id %q: %w", id, st.ID, err)
		}
		sh.txns[st.ID] = &txn{id: st.ID, sh: sh, rec: rec, version: st.Version}
	}
	return sh, nil
}

// begin counts a request or goroutine acting on the shard; false when
// the shard is being released or was dropped.
func (sh *shard) begin() bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.releasing.Load() || sh.dropped.Load() {
		return false
	}
	sh.wg.Add(1)
	return true
}

// stop refuses new requests (release) or everything (drop) and stops the
// marker writers.
func (sh *shard) stop(drop bool) {
	sh.mu.Lock()
	sh.releasing.Store(true)
	if drop {
		sh.dropped.Store(true)
	}
	sh.mu.Unlock()
	sh.cancel()
}

// publish resumes sh's Prepare* transactions and serves sh.
func (c *Coordinator) publish(sh *shard) {
	for _, t := range sh.txns {
		t.mu.Lock()
		if t.rec.state == PrepareCommit || t.rec.state == PrepareAbort {
			c.completeLocked(t)
		}
		t.mu.Unlock()
	}
	c.mu.Lock()
	c.shards[sh.id] = sh
	c.mu.Unlock()
}

// unpublish forgets sh unless a newer acquisition replaced it.
func (c *Coordinator) unpublish(sh *shard) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shards[sh.id] == sh {
		c.shards[sh.id] = nil
	}
}

// fenceValid says whether the cluster still gives sh's fence (always, on
// one node).
func (c *Coordinator) fenceValid(sh *shard) bool {
	if c.cfg.Fencer == nil {
		return true
	}
	f, ok := c.cfg.Fencer.ShardFence(sh.id)
	return ok && f == sh.fence
}

// writable says whether a write of sh's records may be sent.
func (c *Coordinator) writable(sh *shard) bool {
	return !sh.dropped.Load() && c.fenceValid(sh)
}

// enter returns the shard serving id, counted in its wg (the caller calls
// sh.wg.Done), or NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS.
func (c *Coordinator) enter(id string) (*shard, error) {
	shard := ShardOf(id)
	c.mu.Lock()
	sh, loading := c.shards[shard], c.loading[shard]
	c.mu.Unlock()
	switch {
	case c.closed.Load():
		return nil, errNotCoordinator("coordinator closed")
	case sh == nil && loading:
		return nil, fmt.Errorf("txncoord: shard %d is loading: %w", shard, kerr.CoordinatorLoadInProgress)
	case sh == nil:
		return nil, errNotCoordinator("shard %d is not served here", shard)
	case !c.fenceValid(sh) || !sh.begin():
		return nil, errNotCoordinator("shard %d is moving away", shard)
	}
	return sh, nil
}

// AcquireShard starts coordinating a shard whose own key the cluster just
// wrote (its Fencer must give the new fence already): it raises the
// shard's coordinator epoch, loads the shard's records (one range read)
// and serves them, resuming every Prepare* transaction; an Ongoing one
// keeps its timeout. Acquiring a shard served already under the same
// fence does nothing; under another fence the old state is dropped and
// loaded again. On one node (no Fencer) every shard is owned from Open and
// this does nothing.
func (c *Coordinator) AcquireShard(ctx context.Context, shard int32) error {
	if shard < 0 || shard >= Shards {
		return fmt.Errorf("txncoord: shard %d outside [0, %d)", shard, Shards)
	}
	if c.closed.Load() {
		return errNotCoordinator("coordinator closed")
	}
	if c.cfg.Fencer == nil {
		return nil
	}
	fence, ok := c.cfg.Fencer.ShardFence(shard)
	if !ok {
		return errNotCoordinator("acquire shard %d: the cluster gives no fence for it", shard)
	}
	c.mu.Lock()
	cur := c.shards[shard]
	if cur != nil && cur.fence == fence && !cur.releasing.Load() {
		c.mu.Unlock()
		return nil
	}
	if c.loading[shard] {
		c.mu.Unlock()
		return fmt.Errorf("txncoord: acquire shard %d: acquired twice at once", shard)
	}
	c.loading[shard] = true
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.loading[shard] = false
		c.mu.Unlock()
	}()
	if cur != nil {
		c.drop(cur, "acquired again under a new fence")
	}
	sh, err := c.loadShard(ctx, shard, fence)
	if err != nil {
		return err
	}
	if c.closed.Load() {
		sh.cancel()
		return errNotCoordinator("coordinator closed while shard %d loaded", shard)
	}
	c.publish(sh)
	c.lg.Info("transaction coordinator shard acquired", "shard", shard, "transactional_ids", len(sh.txns),
		"coordinator_epoch", sh.epoch, "fence", fence.Version)
	return nil
}

// loadShard raises the shard's coordinator epoch and reads its records.
func (c *Coordinator) loadShard(ctx context.Context, shard int32, fence metadata.Cond) (*shard, error) {
	epochs, err := c.cfg.Meta.RaiseTxnCoordinatorEpochs(ctx, fence, []int32{shard})
	if err != nil {
		return nil, fmt.Errorf("txncoord: acquire shard %d: %w", shard, err)
	}
	stored, err := c.cfg.Meta.LoadShardTxns(ctx, shard)
	if err != nil {
		return nil, fmt.Errorf("txncoord: acquire shard %d: %w", shard, err)
	}
	return c.newShard(shard, fence, epochs[0], stored)
}

// ReleaseShard hands a shard over: it refuses new requests
// (NOT_COORDINATOR), stops the marker writers (the next owner completes
// their transactions) and waits for the writes in flight, then forgets
// the shard. If ctx ends first it returns an error, and the caller drops
// the shard instead. On one node it does nothing.
func (c *Coordinator) ReleaseShard(ctx context.Context, shard int32) error {
	sh := c.clusterShard(shard)
	if sh == nil {
		return nil
	}
	sh.stop(false)
	done := make(chan struct{})
	go func() {
		sh.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("txncoord: release shard %d: writes in flight not done: %w", shard, ctx.Err())
	}
	c.drop(sh, "released")
	return nil
}

// DropShard forgets a shard at once (its lease expired, or its fence
// failed): requests answer NOT_COORDINATOR and nothing more of it is
// written. On one node it does nothing.
func (c *Coordinator) DropShard(shard int32) {
	if sh := c.clusterShard(shard); sh != nil {
		c.drop(sh, "dropped")
	}
}

// clusterShard returns a shard served here in a cluster; nil when it is
// not, out of range, or on one node (where shards never move).
func (c *Coordinator) clusterShard(shard int32) *shard {
	if c.cfg.Fencer == nil || shard < 0 || shard >= Shards {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.shards[shard]
}

// drop forgets sh.
func (c *Coordinator) drop(sh *shard, why string) {
	sh.stop(true)
	c.unpublish(sh)
	c.lg.Info("transaction coordinator shard "+why, "shard", sh.id, "fence", sh.fence.Version)
}

// ownedShards returns the shards served here.
func (c *Coordinator) ownedShards() []*shard {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*shard
	for _, sh := range c.shards {
		if sh != nil {
			out = append(out, sh)
		}
	}
	return out
}
