package cluster

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// session is one etcd lease of the node and everything tied to it: the
// registration, the own keys, the controller campaign. The node acts as an
// owner only while the session is valid: before its local deadline, the
// send time of the last answered keep-alive plus the TTL minus a margin,
// on the monotonic clock. etcd expires the lease no earlier than the TTL
// after it answered that keep-alive, so the node stops before anyone else
// can take its partitions over.
type session struct {
	lease clientv3.LeaseID
	ttl   time.Duration // as granted

	ctx    context.Context // the keep-alive loop; ends at close or loss
	cancel context.CancelFunc
	// work is the context of the controller, the ownership loop and its
	// workers: it ends first at a graceful close, while the keep-alives
	// go on.
	work       context.Context
	stopWork   context.CancelFunc
	workers    sync.WaitGroup
	keepAlives sync.WaitGroup

	deadline   atomic.Int64 // nanoseconds since the node's base time
	lost       chan struct{}
	lostOnce   sync.Once
	isLost     atomic.Bool
	controller atomic.Bool // this session won the controller election
}

// grant starts a session: a new lease, its keep-alive loop running.
func (n *Node) grant(ctx context.Context) (*session, error) {
	// A grant answered late starts a session whose deadline, counted from
	// the send, has mostly passed: give up on it and ask again.
	gctx, cancel := context.WithTimeout(ctx, n.cfg.SessionTimeout/2)
	defer cancel()
	sent := n.now()
	resp, err := n.cfg.Client.Grant(gctx, int64((n.cfg.SessionTimeout+time.Second-1)/time.Second))
	if err != nil {
		return nil, err
	}
	s := &session{lease: resp.ID, ttl: time.Duration(resp.TTL) * time.Second, lost: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.work, s.stopWork = context.WithCancel(s.ctx)
	s.deadline.Store(int64(sent + s.ttl - n.margin(s.ttl)))
	goLabeled(&s.keepAlives, "keep-alive", func() { n.keepAlive(s) })
	return s, nil
}

// margin is how long before the lease could expire on the server the
// node stops acting as an owner: room for clock rate differences and for
// the node to notice.
func (n *Node) margin(ttl time.Duration) time.Duration {
	if n.marginFraction > 0 {
		return time.Duration(float64(ttl) * n.marginFraction)
	}
	return ttl / 5
}

// keepAlive refreshes the lease every TTL/3 and moves the deadline on each
// answer, until the deadline passes or etcd says the lease is gone: then
// the session is lost.
func (n *Node) keepAlive(s *session) {
	interval := s.ttl / 3
	next := n.now() + interval
	for {
		deadline := time.Duration(s.deadline.Load())
		wait := min(next, deadline) - n.now()
		if wait > 0 {
			sleep(s.ctx, wait)
		}
		if s.ctx.Err() != nil {
			return
		}
		now := n.now()
		if now >= deadline {
			n.lose(s, "no keep-alive answered before the session's local deadline")
			return
		}
		if now < next {
			continue
		}
		if n.keepAlivePaused.Load() {
			next = now + interval
			continue
		}
		switch err := n.keepAliveOnce(s, deadline); {
		case err == nil:
			next = now + interval
		case errors.Is(err, rpctypes.ErrLeaseNotFound):
			n.lose(s, "etcd no longer has the session's lease")
			return
		default:
			next = now + interval/4 // try again soon; the deadline decides
		}
	}
}

func (n *Node) keepAliveOnce(s *session, deadline time.Duration) error {
	ctx, cancel := context.WithTimeout(s.ctx, deadline-n.now())
	defer cancel()
	sent := n.now()
	resp, err := n.cfg.Client.KeepAliveOnce(ctx, s.lease)
	if err != nil {
		return err
	}
	ttl := time.Duration(resp.TTL) * time.Second
	next := sent + ttl - n.margin(s.ttl)
	if next > time.Duration(s.deadline.Load()) {
		s.deadline.Store(int64(next))
	}
	return nil
}

// lose marks the session lost, once: Valid turns false at once and the
// run loop drops everything and starts a new session.
func (n *Node) lose(s *session, why string) {
	s.lostOnce.Do(func() {
		s.isLost.Store(true)
		close(s.lost)
		n.metrics.sessionsLost.Inc()
		n.cfg.Logger.Warn("cluster: session lost: dropping every partition and shard owned here until a new session",
			"node_id", n.cfg.NodeID, "lease", int64(s.lease), "reason", why)
	})
}

// valid reports whether the node may act as an owner in this session.
func (n *Node) valid(s *session) bool {
	return s != nil && !s.isLost.Load() && n.now() < time.Duration(s.deadline.Load())
}

// now is the monotonic time since the node started.
func (n *Node) now() time.Duration { return time.Since(n.base) }
