package cluster

import (
	"context"
	"errors"
	"fmt"
	"runtime/pprof"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/sediment-io/sediment/metadata"
)

// Node is this broker's membership in the cluster. It implements
// partition.Ownership (Fence, Valid, Sweeps) and the views protocol needs
// (Brokers, Controller, Leader, ShardLeader).
type Node struct {
	cfg  Config
	base time.Time // the monotonic clock's origin

	brokers, members, placements, owners, topics, controllers *view

	ctlKick, ownKick chan struct{} // one slot each: the controller's and the ownership loop's wake-ups
	topicsChanged    atomic.Bool
	syncedTopics     map[metadata.TopicID]bool // the ownership loop's: topics wanted at its last SyncTopics
	supersededAt     time.Time                 // the ownership loop's: its last DropSuperseded
	supersededRuns   atomic.Bool               // a DropSuperseded is running

	sess atomic.Pointer[session] // the current session

	mu       sync.Mutex // guards held and inflight
	held     map[slot]*holding
	inflight map[slot]bool

	metrics *metrics

	viewsCtx  context.Context
	stopViews context.CancelFunc
	views     sync.WaitGroup
	runCancel context.CancelFunc
	runDone   chan struct{}
	closeOnce sync.Once
	closeErr  error

	// Test hooks.
	keepAlivePaused atomic.Bool // the keep-alive loop sends nothing, and no new session starts
	marginFraction  float64     // of the TTL; 0: 1/5
}

// Start joins the cluster: it grants a session, registers the broker,
// starts the views, the controller campaign and the ownership loop, and
// returns. An etcd that does not answer is retried, with a log line, until
// ctx ends; another live broker with this --node-id fails it with
// ErrNodeIDTaken. Ownership converges in the background; Fence says what
// is owned.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	return start(ctx, cfg, nil)
}

func start(ctx context.Context, cfg Config, hooks func(*Node)) (*Node, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, base: time.Now(), ctlKick: make(chan struct{}, 1), ownKick: make(chan struct{}, 1),
		held: map[slot]*holding{}, inflight: map[slot]bool{}, runDone: make(chan struct{})}
	if hooks != nil {
		hooks(n)
	}
	m, err := newMetrics(n, n.cfg.Registry)
	if err != nil {
		return nil, err
	}
	n.metrics = m
	n.startViews()
	s, err := n.firstSession(ctx)
	if err == nil {
		if err = n.waitViews(ctx); err != nil {
			n.endSession(s)
			n.revoke(s)
		}
	}
	if err != nil {
		n.stopViews()
		n.views.Wait()
		n.metrics.unregister()
		return nil, err
	}
	n.topicsChanged.Store(true)
	n.startWork(s)
	runCtx, cancel := context.WithCancel(context.Background())
	n.runCancel = cancel
	go pprof.Do(runCtx, pprof.Labels("cluster", "sessions"), n.run)
	cfg.Logger.Info("cluster: joined", "node_id", cfg.NodeID, "lease", int64(s.lease), "session_timeout", s.ttl)
	return n, nil
}

func (n *Node) startViews() {
	n.viewsCtx, n.stopViews = context.WithCancel(context.Background())
	c, p, l := n.cfg.Client, n.cfg.Prefix, n.cfg.Logger
	ctl := func() { kick(n.ctlKick) }
	own := func() { kick(n.ownKick) }
	n.brokers = newView(c, p, brokersPrefix, decodeBroker, ctl, l)
	n.members = newView(c, p, membersPrefix, decodeMember, ctl, l)
	n.placements = newView(c, p, placementPrefix, decodePlacement, func() { ctl(); own() }, l)
	n.owners = newView(c, p, ownPrefix, decodeOwner, own, l)
	n.topics = newView(c, p, topicsPrefix, decodeNothing, func() { n.topicsChanged.Store(true); ctl(); own() }, l)
	n.controllers = newView(c, p, controllerPrefix+"/", decodeControllerValue, func() {}, l)
	for _, v := range []*view{n.brokers, n.members, n.placements, n.owners, n.topics, n.controllers} {
		goLabeled(&n.views, "view "+v.rel, func() { v.run(n.viewsCtx) })
	}
}

// waitViews waits until every view has read its keys once.
func (n *Node) waitViews(ctx context.Context) error {
	for _, v := range []*view{n.brokers, n.members, n.placements, n.owners, n.topics, n.controllers} {
		select {
		case <-v.ready:
		case <-ctx.Done():
			return fmt.Errorf("cluster: reading the cluster's keys: %w", context.Cause(ctx))
		}
	}
	return nil
}

// goLabeled runs fn in a goroutine labelled for pprof, counted in wg.
func goLabeled(wg *sync.WaitGroup, name string, fn func()) {
	wg.Add(1)
	go pprof.Do(context.Background(), pprof.Labels("cluster", name), func(context.Context) {
		defer wg.Done()
		fn()
	})
}

func kick(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// firstSession opens the node's first session, retrying with a log line
// while etcd does not answer, until ctx ends. A node id another live
// broker holds ends it at once.
func (n *Node) firstSession(ctx context.Context) (*session, error) {
	backoff := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		s, err := n.openSession(ctx)
		if err == nil || errors.Is(err, ErrNodeIDTaken) {
			return s, err
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("cluster: joining: %w", errors.Join(context.Cause(ctx), err))
		}
		n.cfg.Logger.Warn("cluster: cannot join yet, retrying", "node_id", n.cfg.NodeID, "attempt", attempt,
			"retry_in", backoff, "err", err)
		sleep(ctx, backoff)
		backoff = min(2*backoff, 5*time.Second)
	}
}

// openSession grants a lease and registers on it.
func (n *Node) openSession(ctx context.Context) (*session, error) {
	s, err := n.grant(ctx)
	if err != nil {
		return nil, fmt.Errorf("cluster: grant a session lease: %w", err)
	}
	if err := n.register(ctx, s); err != nil {
		n.endSession(s)
		n.revoke(s)
		return nil, err
	}
	n.sess.Store(s)
	return s, nil
}

// startWork starts the session's controller campaign and ownership loop.
func (n *Node) startWork(s *session) {
	goLabeled(&s.workers, "campaign", func() { n.campaign(s) })
	goLabeled(&s.workers, "converge", func() { n.converge(s) })
}

// run replaces a lost session: drop everything owned, then a new lease,
// registration and campaign, as soon as etcd answers.
func (n *Node) run(ctx context.Context) {
	defer close(n.runDone)
	for {
		s := n.sess.Load()
		select {
		case <-ctx.Done():
			return
		case <-s.lost:
		}
		s.stopWork()
		n.dropAll()
		n.endSession(s)
		if !n.renew(ctx, s) {
			return
		}
	}
}

// renew revokes the lost session's lease and opens a new session,
// retrying until it has one or ctx ends.
func (n *Node) renew(ctx context.Context, old *session) bool {
	for n.keepAlivePaused.Load() && ctx.Err() == nil {
		sleep(ctx, 20*time.Millisecond) // a paused node talks to etcd no more
	}
	revoked := false
	backoff := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		if ctx.Err() != nil {
			return false
		}
		// Until the old lease is gone, its registration would hold up
		// the new one; etcd may have kept it alive over a restart.
		revoked = revoked || n.revoke(old)
		actx, cancel := context.WithTimeout(ctx, n.cfg.SessionTimeout+2*registerMargin)
		s, err := n.openSession(actx)
		cancel()
		if err == nil {
			n.topicsChanged.Store(true)
			n.startWork(s)
			n.cfg.Logger.Info("cluster: new session", "node_id", n.cfg.NodeID, "lease", int64(s.lease), "attempt", attempt)
			return true
		}
		n.cfg.Logger.Warn("cluster: no new session yet, retrying", "node_id", n.cfg.NodeID, "attempt", attempt,
			"retry_in", backoff, "err", err)
		sleep(ctx, backoff)
		backoff = min(2*backoff, 5*time.Second)
	}
}

// endSession cuts the session's work and keep-alives short and waits for
// them.
func (n *Node) endSession(s *session) {
	s.stopWork()
	s.cancel()
	s.workers.Wait()
	s.keepAlives.Wait()
}

// revoke ends the lease on etcd, best effort: its keys (registration, own
// keys, campaign) go at once instead of at its expiry. It reports whether
// the lease is gone.
func (n *Node) revoke(s *session) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := n.cfg.Client.Revoke(ctx, s.lease)
	return err == nil || errors.Is(err, rpctypes.ErrLeaseNotFound)
}

// Valid reports whether the broker may act as an owner: it has a session
// and is before the session's local deadline (partition.Ownership).
func (n *Node) Valid() bool { return n.valid(n.sess.Load()) }

// Lost returns a channel that is closed once the current session is lost
// (its local deadline passed, or etcd dropped its lease). A new session
// brings a new channel: call Lost again after each loss.
func (n *Node) Lost() <-chan struct{} { return n.sess.Load().lost }

// Sweeps reports whether this broker is the controller, which runs the
// orphan and garbage sweeps (partition.Ownership).
func (n *Node) Sweeps() bool {
	s := n.sess.Load()
	return n.valid(s) && s.controller.Load()
}

// Fence returns the condition that holds only while this broker owns the
// partition; ok is false when it does not own it now or the session is not
// valid (partition.Ownership).
func (n *Node) Fence(id metadata.TopicID, p int32) (metadata.Cond, bool) {
	return n.fence(slot{topic: id, index: p})
}

// ShardFence is Fence for a group-coordinator shard (groupcoord.Fencer).
func (n *Node) ShardFence(shard int32) (metadata.Cond, bool) {
	return n.fence(slot{shard: true, index: shard})
}

func (n *Node) fence(sl slot) (metadata.Cond, bool) {
	if !n.Valid() {
		return metadata.Cond{}, false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	h, ok := n.held[sl]
	if !ok {
		return metadata.Cond{}, false
	}
	return h.fence, true
}

// Brokers returns the live brokers, by node id.
func (n *Node) Brokers() []Broker {
	var out []Broker
	for _, e := range n.brokers.snapshot() {
		out = append(out, e.value.(brokerRecord).broker())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NodeID < out[j].NodeID })
	return out
}

// Controller returns the controller's node id, -1 while there is none.
func (n *Node) Controller() int32 {
	node, first := int32(-1), int64(0)
	for _, e := range n.controllers.snapshot() {
		if first == 0 || e.createRev < first {
			node, first = e.value.(int32), e.createRev
		}
	}
	return node
}

// Leader returns the owner of a partition and its epoch, from the own keys.
func (n *Node) Leader(id metadata.TopicID, p int32) (node, epoch int32, ok bool) {
	e, _, ok := n.owners.get(metadata.OwnerKey(id, p))
	if !ok {
		return -1, -1, false
	}
	r := e.value.(metadata.OwnerRecord)
	return r.NodeID, r.Epoch, true
}

// ShardLeader returns the owner of a group-coordinator shard.
func (n *Node) ShardLeader(shard int32) (node int32, ok bool) {
	e, _, ok := n.owners.get(metadata.ShardOwnerKey(shard))
	if !ok {
		return -1, false
	}
	return e.value.(metadata.OwnerRecord).NodeID, true
}
