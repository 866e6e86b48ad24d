package groupcoord

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/sediment-io/sediment/metadata"
)

// Shards is the number of coordinator shards groups are spread over. In a
// cluster each shard has one owner, which coordinates all its groups.
const Shards = metadata.GroupShards

// ShardOf returns the coordinator shard of a group: FNV-1a 32 of its id,
// mod Shards.
func ShardOf(groupID string) int32 { return metadata.GroupShard(groupID) }

// Fencer gives the fences of the shards this broker owns in a cluster.
type Fencer interface {
	// ShardFence returns the condition that holds only while this broker
	// owns the shard; ok is false when it does not own it now (or is past
	// its local lease deadline, where it must not answer as coordinator).
	ShardFence(shard int32) (metadata.Cond, bool)
}

// shardOwner is one shard as this coordinator owns it: the fence every
// write of its groups carries, and their record versions. A new
// acquisition is a new shardOwner, so that nothing of an earlier one
// (a queued write, a group) can act under the new fence.
type shardOwner struct {
	shard int32
	fence metadata.Cond
	// versions is each group record's version in metadata (absent: no
	// record). It is filled before the owner is published; from then on
	// only the persister goroutine uses it.
	versions map[string]int64
	// releasing: ReleaseShard began; requests and new writes are refused
	// while the writes queued before finish.
	releasing atomic.Bool
	// dropped: forgotten; its writes fail without being tried.
	dropped atomic.Bool
	// txnGroups are, by producer id, the groups with offsets of the
	// producer's open transaction, pending or being written: those
	// CompleteTxn visits. Guarded by Coordinator.mu.
	txnGroups map[int64]map[*group]struct{}
}

func newShardOwner(shard int32, fence metadata.Cond) *shardOwner {
	return &shardOwner{shard: shard, fence: fence, versions: map[string]int64{}, txnGroups: map[int64]map[*group]struct{}{}}
}

// fenceValid says whether the cluster still gives o's fence for its shard
// (always, on one node).
func (c *Coordinator) fenceValid(o *shardOwner) bool {
	if c.fencer == nil {
		return true
	}
	f, ok := c.fencer.ShardFence(o.shard)
	return ok && f == o.fence
}

// ownerOf returns the owner of the shard of group id, or ErrNotCoordinator
// when the shard is not served here.
func (c *Coordinator) ownerOf(id string) (*shardOwner, error) {
	c.mu.Lock()
	o := c.shards[ShardOf(id)]
	c.mu.Unlock()
	if o == nil || o.releasing.Load() || !c.fenceValid(o) {
		return nil, ErrNotCoordinator
	}
	return o, nil
}

// writable says whether a write of o's groups may be sent.
func (c *Coordinator) writable(o *shardOwner) bool {
	return !o.dropped.Load() && c.fenceValid(o)
}

// AcquireShard starts coordinating a shard whose own key the cluster just
// wrote (its Fencer must give the new fence already): it loads the shard's
// groups and offsets (one range read each) and serves them from then on,
// every write fenced by that fence. Acquiring a shard served already under
// the same fence does nothing; under another fence, the old state is
// dropped and loaded again.
// Members resume with their member ids, generation and assignment. On one
// node (no Fencer) every shard is owned from Open and this does nothing.
func (c *Coordinator) AcquireShard(ctx context.Context, shard int32) error {
	if shard < 0 || shard >= Shards {
		return fmt.Errorf("groupcoord: shard %d outside [0, %d)", shard, Shards)
	}
	if c.closed.Load() {
		return ErrNotCoordinator
	}
	if c.fencer == nil {
		return nil
	}
	fence, ok := c.fencer.ShardFence(shard)
	if !ok {
		return fmt.Errorf("groupcoord: acquire shard %d: the cluster gives no fence for it: %w", shard, ErrNotCoordinator)
	}
	c.mu.Lock()
	cur := c.shards[shard]
	c.mu.Unlock()
	if cur != nil && cur.fence == fence && !cur.releasing.Load() {
		return nil
	}
	if cur != nil {
		c.dropOwner(cur, "acquired again under a new fence")
	}
	stored, err := c.meta.LoadShardGroups(ctx, shard)
	if err != nil {
		return fmt.Errorf("groupcoord: acquire shard %d: %w", shard, err)
	}
	o := newShardOwner(shard, fence)
	if err := c.publish(o, stored); err != nil {
		return err
	}
	c.lg.Info("group coordinator shard acquired", "shard", shard, "groups", len(stored), "fence", fence.Version)
	return nil
}

// publish loads stored into groups of o and starts serving them.
func (c *Coordinator) publish(o *shardOwner, stored []metadata.StoredGroup) error {
	for _, sg := range stored {
		o.versions[sg.ID] = sg.Version
	}
	groups := make([]*group, 0, len(stored))
	for _, sg := range stored {
		groups = append(groups, loadGroup(c, o, sg))
	}
	c.mu.Lock()
	if c.shards[o.shard] == nil {
		c.shards[o.shard] = o
		for _, g := range groups {
			c.groups[g.id] = g
		}
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	o.dropped.Store(true)
	for _, g := range groups {
		g.mu.Lock()
		g.shutdownLocked()
		g.mu.Unlock()
	}
	return fmt.Errorf("groupcoord: acquire shard %d: acquired twice at once", o.shard)
}

// ReleaseShard hands a shard over: it refuses new requests and writes of
// the shard's groups (ErrNotCoordinator), waits until the writes queued
// before are durable and answered, then forgets the groups. If ctx ends
// first it returns an error, and the caller drops the shard instead.
func (c *Coordinator) ReleaseShard(ctx context.Context, shard int32) error {
	o := c.shardOwner(shard)
	if o == nil {
		return nil
	}
	o.releasing.Store(true)
	done := make(chan struct{})
	if err := c.persist.enqueue(&writeReq{own: o, barrier: true, apply: func(error) { close(done) }}); err != nil {
		return fmt.Errorf("groupcoord: release shard %d: %w", shard, err)
	}
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("groupcoord: release shard %d: pending writes not done: %w", shard, ctx.Err())
	}
	c.dropOwner(o, "released")
	return nil
}

// DropShard forgets a shard at once (its lease expired, or its fence
// failed): waiting requests get ErrNotCoordinator, and its queued writes
// fail without being tried.
func (c *Coordinator) DropShard(shard int32) {
	if o := c.shardOwner(shard); o != nil {
		c.dropOwner(o, "dropped")
	}
}

// shardOwner returns the owner of a shard in a cluster, nil when the shard
// is not owned here, out of range, or on one node (where shards never
// move).
func (c *Coordinator) shardOwner(shard int32) *shardOwner {
	if c.fencer == nil || shard < 0 || shard >= Shards {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.shards[shard]
}

// dropOwner forgets o and its groups, unless a newer owner replaced it.
func (c *Coordinator) dropOwner(o *shardOwner, why string) {
	c.mu.Lock()
	if c.shards[o.shard] != o {
		c.mu.Unlock()
		return
	}
	c.shards[o.shard] = nil
	o.dropped.Store(true)
	var groups []*group
	for id, g := range c.groups {
		if g.own == o {
			groups = append(groups, g)
			delete(c.groups, id)
		}
	}
	c.mu.Unlock()
	for _, g := range groups {
		g.mu.Lock()
		g.shutdownLocked()
		g.mu.Unlock()
	}
	c.lg.Info("group coordinator shard "+why, "shard", o.shard, "groups", len(groups), "fence", o.fence.Version)
}

// ownedShards counts the shards served here.
func (c *Coordinator) ownedShards() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, o := range c.shards {
		if o != nil {
			n++
		}
	}
	return n
}
