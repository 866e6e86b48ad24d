package cluster

import (
	"context"
	"sync"
	"sync/atomic"
)

// Close leaves the cluster gracefully: it stops taking new work, removes
// the registration so that the controller places this broker's partitions
// elsewhere, hands every partition and shard over (each commits what it
// took, then its own key goes), resigns, and revokes the lease. What ctx
// cuts short is dropped; its keys go with the lease. A wal-mode broker's
// member record is removed only when every hand-over finished, so that
// partitions whose WAL still holds acknowledged records wait for it.
func (n *Node) Close(ctx context.Context) error {
	n.closeOnce.Do(func() { n.closeErr = n.close(ctx) })
	return n.closeErr
}

func (n *Node) close(ctx context.Context) error {
	n.runCancel()
	<-n.runDone
	s := n.sess.Load()
	s.stopWork()
	s.workers.Wait()
	clean := n.valid(s)
	if clean {
		if _, err := n.cfg.Client.Delete(ctx, n.cfg.Prefix+brokerKey(n.cfg.NodeID)); err != nil {
			clean = false
		}
	}
	if !n.releaseAll(ctx, s) {
		clean = false
	}
	if clean {
		n.cfg.Client.Delete(ctx, n.cfg.Prefix+memberKey(n.cfg.NodeID)) //nolint:errcheck // kept: partitions wait, as after a crash
	}
	s.lostOnce.Do(func() { s.isLost.Store(true); close(s.lost) })
	s.cancel()
	s.keepAlives.Wait()
	n.revoke(s)
	n.stopViews()
	n.views.Wait()
	n.metrics.unregister()
	n.cfg.Logger.Info("cluster: left", "node_id", n.cfg.NodeID, "clean", clean)
	return nil
}

// releaseAll hands every held slot over, a few at a time, and reports
// whether all finished gracefully.
func (n *Node) releaseAll(ctx context.Context, s *session) bool {
	n.mu.Lock()
	var slots []slot
	for sl, h := range n.held {
		if h.sess == s {
			slots = append(slots, sl)
		}
	}
	n.mu.Unlock()
	var ok atomic.Bool
	ok.Store(true)
	sem := make(chan struct{}, workerLimit)
	var wg sync.WaitGroup
	for _, sl := range slots {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if !n.handOver(ctx, s, sl) {
				ok.Store(false)
			}
		}()
	}
	wg.Wait()
	return ok.Load()
}

// handOver hands a slot over: its owner commits what it took and stops
// serving it (on error or when ctx ends it drops it instead), then the own
// key goes. It reports whether the hand-over was graceful.
func (n *Node) handOver(ctx context.Context, s *session, sl slot) bool {
	n.mu.Lock()
	h := n.held[sl]
	n.mu.Unlock()
	if h == nil || h.sess != s {
		return true
	}
	err := n.finish(ctx, sl)
	if err != nil {
		n.cfg.Logger.Warn("cluster: graceful hand-over failed, dropping", "key", sl.ownKey(), "err", err)
		n.drop(sl)
	}
	if n.forget(s, sl) {
		n.releaseKey(sl, h.fence)
	}
	return err == nil
}
