package cluster

import (
	"context"
	"strings"
	"time"

	"github.com/sediment-io/sediment/metadata"
)

// slot is a partition, a group-coordinator shard (shard set, index the
// shard), or a table topic's converter (table set, topic the topic).
type slot struct {
	topic metadata.TopicID
	index int32
	shard bool
	table bool
}

func (sl slot) ownKey() string {
	switch {
	case sl.shard:
		return metadata.ShardOwnerKey(sl.index)
	case sl.table:
		return TableOwnerKey(sl.topic)
	}
	return metadata.OwnerKey(sl.topic, sl.index)
}

// A session's work context (s.work) ends the loop and keeps new work from
// starting; the work itself runs under the session's context (s.ctx), so
// that a graceful close lets hand-overs under way finish while a lost
// session cuts them short.

// holding is a slot this node owns in a session: its own key was written
// at fence.Version. It is held from the own key's write until its release
// (or a loss) ends, so that the log can commit under the fence while it
// acquires and while it hands over.
type holding struct {
	fence     metadata.Cond
	sess      *session
	releasing bool
}

// Bounds of one convergence pass.
const (
	convergePeriod  = time.Second // a pass at least this often, for retries
	maxStartsPerRun = 64          // acquisitions and releases started per pass
	workerLimit     = 4           // at most this many run at once
)

// converge runs the ownership loop of a session: make what is owned here
// match the placement, on every change of the own keys, the placement or
// the topics, and every convergePeriod.
func (n *Node) converge(s *session) {
	sem := make(chan struct{}, workerLimit)
	t := time.NewTicker(convergePeriod)
	defer t.Stop()
	periodic := true
	for s.work.Err() == nil {
		n.pass(s, sem, periodic)
		select {
		case <-s.work.Done():
		case <-n.ownKick:
			periodic = false
		case <-t.C:
			periodic = true
		}
	}
}

// pass is one convergence pass: drop what was lost, release what is placed
// elsewhere, acquire what is placed here; the periodic passes also look
// for stray own keys.
func (n *Node) pass(s *session, sem chan struct{}, periodic bool) {
	want := n.wanted()
	synced := n.syncTopics(s, want)
	var lost, release, acquire []slot
	n.mu.Lock()
	for sl, h := range n.held {
		if n.lostKey(sl, h) {
			delete(n.held, sl)
			lost = append(lost, sl)
		} else if !want[sl] && !h.releasing && !n.inflight[sl] && len(release) < maxStartsPerRun {
			h.releasing = true
			n.inflight[sl] = true
			release = append(release, sl)
		}
	}
	for sl := range want {
		if synced && n.held[sl] == nil && !n.inflight[sl] && n.ownFree(sl) && len(acquire) < maxStartsPerRun {
			n.inflight[sl] = true
			acquire = append(acquire, sl)
		}
	}
	var strays map[slot]metadata.Cond
	if periodic {
		strays = n.strays(s)
	}
	n.mu.Unlock()
	if periodic {
		n.dropSuperseded(s)
	}
	for _, sl := range lost {
		n.cfg.Logger.Warn("cluster: ownership lost (own key gone or taken)", "key", sl.ownKey())
		n.drop(sl)
	}
	for sl, fence := range strays {
		n.cfg.Logger.Warn("cluster: deleting an own key of this session that nothing here serves", "key", sl.ownKey())
		n.releaseKey(sl, fence)
	}
	for _, sl := range release {
		n.spawn(s, sem, sl, n.release)
	}
	for _, sl := range acquire {
		n.spawn(s, sem, sl, n.acquire)
	}
}

// supersededPeriod: how often the log looks for kept batches that no
// longer continue their partition's log.
const supersededPeriod = 10 * time.Second

// dropSuperseded has the log drop, in the background, the kept batches of
// partitions it does not own that no longer continue their log: after a
// takeover, or once another owner committed past them, they would hold
// this broker's WAL for as long as it does not own the partition again.
// One run at a time, at most every supersededPeriod.
func (n *Node) dropSuperseded(s *session) {
	if time.Since(n.supersededAt) < supersededPeriod || !n.supersededRuns.CompareAndSwap(false, true) {
		return
	}
	n.supersededAt = time.Now()
	s.workers.Add(1)
	go func() {
		defer s.workers.Done()
		defer n.supersededRuns.Store(false)
		if err := n.cfg.Partitions.DropSuperseded(s.work); err != nil && s.work.Err() == nil {
			n.cfg.Logger.Warn("cluster: looking for kept batches another owner superseded failed", "err", err)
		}
	}()
}

// strays returns the own keys on this session's lease that this node
// neither holds nor is acquiring: an acquisition whose unknown outcome was
// read back as not applied, and that applied after all. Nothing serves
// them, and they would keep every broker, this one included, from the
// slot; they are deleted at their version. Called with n.mu held.
func (n *Node) strays(s *session) map[slot]metadata.Cond {
	out := map[slot]metadata.Cond{}
	n.owners.each(func(key string, e entry) {
		if e.lease != int64(s.lease) || len(out) >= maxStartsPerRun {
			return
		}
		var sl slot
		if id, p, ok := metadata.ParseOwnerKey(key); ok {
			sl = slot{topic: id, index: p}
		} else if shard, ok := metadata.ParseShardOwnerKey(key); ok {
			sl = slot{shard: true, index: shard}
		} else if id, ok := ParseTableOwnerKey(key); ok {
			sl = slot{table: true, topic: id}
		} else {
			return
		}
		if n.held[sl] == nil && !n.inflight[sl] {
			out[sl] = metadata.Cond{Key: key, Version: e.modRev}
		}
	})
	return out
}

// syncTopics has the log read the topics again when they changed, or when
// the placement puts a partition here of a topic the log may not know yet
// (the placement and topics views are separate watches, so the placement
// of a new topic may arrive first). It reports whether the log knows every
// wanted topic: acquisitions wait until it does.
func (n *Node) syncTopics(s *session, want map[slot]bool) bool {
	topics := map[metadata.TopicID]bool{}
	fresh := false
	for sl := range want {
		if !sl.shard {
			topics[sl.topic] = true
			fresh = fresh || !n.syncedTopics[sl.topic]
		}
	}
	if !n.topicsChanged.Swap(false) && !fresh {
		return true
	}
	if err := n.cfg.Partitions.SyncTopics(s.work); err != nil {
		n.topicsChanged.Store(true)
		n.cfg.Logger.Warn("cluster: reading the topics failed, retrying", "err", err)
		return false
	}
	n.syncedTopics = topics
	return true
}

func (n *Node) spawn(s *session, sem chan struct{}, sl slot, fn func(*session, slot)) {
	s.workers.Add(1)
	go func() {
		defer s.workers.Done()
		defer func() {
			n.mu.Lock()
			delete(n.inflight, sl)
			n.mu.Unlock()
			kick(n.ownKick)
		}()
		select {
		case sem <- struct{}{}:
		case <-s.work.Done():
			n.giveBack(s, sl)
			return
		}
		defer func() { <-sem }()
		fn(s, sl)
	}()
}

// giveBack undoes a release that never started: the slot stays held.
func (n *Node) giveBack(s *session, sl slot) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if h := n.held[sl]; h != nil && h.sess == s {
		h.releasing = false
	}
}

// lostKey reports whether the own view shows the key of a held slot gone
// or rewritten: once the view is at or past the fence's revision, the key
// must be there at exactly that version. Called with n.mu held.
func (n *Node) lostKey(sl slot, h *holding) bool {
	e, rev, ok := n.owners.get(h.fence.Key)
	if rev < h.fence.Version {
		return false // the view has not seen the write yet
	}
	return !ok || e.modRev != h.fence.Version
}

// ownFree reports whether the own view shows the slot without an owner:
// while another broker holds it, acquiring is bound to fail; its deletion
// wakes the loop.
func (n *Node) ownFree(sl slot) bool {
	_, _, ok := n.owners.get(sl.ownKey())
	return !ok
}

// wanted returns the slots the placement puts on this node.
func (n *Node) wanted() map[slot]bool {
	want := map[slot]bool{}
	for key, e := range n.placements.snapshot() {
		owners := e.value.(placementRecord).Owners
		var sl slot
		switch {
		case key == tablesPlacement:
			n.wantedTables(e.value.(placementRecord), want)
			continue
		case key == shardsPlacement:
			if n.cfg.Shards == nil {
				continue
			}
			sl.shard = true
		default:
			if sl.topic.UnmarshalText([]byte(strings.TrimPrefix(key, placementPrefix))) != nil {
				continue
			}
		}
		for i, o := range owners {
			if o == n.cfg.NodeID {
				sl.index = int32(i)
				want[sl] = true
			}
		}
	}
	return want
}

// acquire writes a slot's own key, then hands the slot to its owner (the
// log or the coordinator). If that fails, the key is released again.
func (n *Node) acquire(s *session, sl slot) {
	fence, err := n.writeOwnKey(s, sl)
	if err != nil {
		if !metadata.IsConflict(err) {
			n.cfg.Logger.Warn("cluster: acquiring failed", "key", sl.ownKey(), "err", err)
		}
		return
	}
	n.mu.Lock()
	if n.sess.Load() != s || s.work.Err() != nil {
		n.mu.Unlock()
		n.releaseKey(sl, fence)
		return
	}
	n.held[sl] = &holding{fence: fence, sess: s}
	n.mu.Unlock()
	if err := n.hand(s.ctx, sl); err != nil {
		n.cfg.Logger.Warn("cluster: taking ownership failed, releasing", "key", sl.ownKey(), "err", err)
		n.forget(s, sl)
		n.drop(sl)
		n.releaseKey(sl, fence)
		return
	}
	n.mu.Lock()
	h := n.held[sl]
	n.mu.Unlock()
	if h == nil || h.fence != fence {
		n.drop(sl) // lost while it was being acquired: the loss dropped it before it was taken
	}
}

func (n *Node) writeOwnKey(s *session, sl slot) (metadata.Cond, error) {
	node, lease := n.cfg.NodeID, int64(s.lease)
	if sl.table {
		return n.acquireTableKey(s, sl.topic)
	}
	if sl.shard {
		return n.cfg.Meta.AcquireShard(s.ctx, sl.index, node, lease)
	}
	kept := n.cfg.Partitions.Kept(sl.topic, sl.index)
	fence, _, err := n.cfg.Meta.AcquirePartitionKeeping(s.ctx, sl.topic, sl.index, node, lease, kept)
	return fence, err
}

func (n *Node) hand(ctx context.Context, sl slot) error {
	if sl.table {
		return n.cfg.Tables.AcquireTable(ctx, sl.topic)
	}
	if sl.shard {
		return n.cfg.Shards.AcquireShard(ctx, sl.index)
	}
	return n.cfg.Partitions.Acquire(ctx, sl.topic, sl.index)
}

// release hands a slot over, bounded by releaseTimeout.
func (n *Node) release(s *session, sl slot) {
	ctx, cancel := context.WithTimeout(s.ctx, n.releaseTimeout())
	defer cancel()
	n.handOver(ctx, s, sl)
}

// releaseTimeout bounds a graceful hand-over: the log commits what it has
// taken, an upload interval or so.
func (n *Node) releaseTimeout() time.Duration { return max(2*n.cfg.SessionTimeout, 10*time.Second) }

func (n *Node) finish(ctx context.Context, sl slot) error {
	if sl.table {
		return n.cfg.Tables.ReleaseTable(ctx, sl.topic)
	}
	if sl.shard {
		return n.cfg.Shards.ReleaseShard(ctx, sl.index)
	}
	return n.cfg.Partitions.Release(ctx, sl.topic, sl.index)
}

// forget removes a held slot of session s; false when it was not held
// (lost or dropped already).
func (n *Node) forget(s *session, sl slot) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if h := n.held[sl]; h != nil && h.sess == s {
		delete(n.held, sl)
		return true
	}
	return false
}

// releaseKey deletes an own key at its fence, best effort: when it fails
// the key goes with the lease.
func (n *Node) releaseKey(sl slot, fence metadata.Cond) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var err error
	if sl.table {
		err = n.releaseTableKey(ctx, fence)
	} else if sl.shard {
		err = n.cfg.Meta.ReleaseShard(ctx, fence)
	} else {
		err = n.cfg.Meta.ReleasePartition(ctx, fence)
	}
	if err != nil && !metadata.IsConflict(err) {
		n.cfg.Logger.Warn("cluster: deleting an own key failed; it goes with the lease", "key", sl.ownKey(), "err", err)
	}
}

func (n *Node) drop(sl slot) {
	if sl.table {
		n.cfg.Tables.DropTable(sl.topic)
		return
	}
	if sl.shard {
		n.cfg.Shards.DropShard(sl.index)
		return
	}
	n.cfg.Partitions.Drop(sl.topic, sl.index)
}

// dropAll forgets every fence and drops every slot at once: the session is
// lost.
func (n *Node) dropAll() {
	n.mu.Lock()
	held := n.held
	n.held = map[slot]*holding{}
	n.mu.Unlock()
	for sl := range held {
		n.drop(sl)
	}
}
