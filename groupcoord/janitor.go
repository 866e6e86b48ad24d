package groupcoord

import (
	"context"
	"sync"
	"time"

	"github.com/sediment-io/sediment/metadata"
)

// janitorPoll is how often the cleanup loop rereads
// offsets.retention.check.interval.ms, so that a change to it applies
// within this long.
const janitorPoll = 5 * time.Second

// runJanitor runs cleanup every offsets.retention.check.interval.ms until
// ctx ends.
func (c *Coordinator) runJanitor(ctx context.Context) {
	last := c.clock.Now()
	t := time.NewTimer(janitorPoll)
	defer t.Stop()
	for {
		interval := c.settings().retentionCheck
		t.Reset(min(interval, janitorPoll))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if now := c.clock.Now(); now.Sub(last) >= interval {
			c.cleanup()
			last = now
		}
	}
}

// cleanup expires offsets (offsets.retention.minutes), drops offsets of
// deleted topics, and deletes empty groups left without offsets. It
// returns once its changes are durable (or failed).
func (c *Coordinator) cleanup() {
	now, s := c.clock.Now(), c.settings()
	var wg sync.WaitGroup
	for _, g := range c.allGroups() {
		g.mu.Lock()
		g.cleanupLocked(now, s.retention, &wg)
		g.mu.Unlock()
	}
	wg.Wait()
}

// cleanupLocked cleans one group; wg counts its writes until they are
// done. A group with commits in flight is left for the next pass: an
// expiry decided now must not delete an offset whose newer commit is about
// to land. Offsets pending in a transaction keep their partition's offset
// and their group.
func (g *group) cleanupLocked(now time.Time, retention time.Duration, wg *sync.WaitGroup) {
	if g.state == StateDead || g.inflight > 0 {
		return
	}
	var stale, expired []metadata.OffsetWrite
	for tp, o := range g.offsets {
		switch {
		case g.unstableLocked(tp):
			// Kafka keeps an offset while a transaction's offset of its
			// partition is pending: the transaction may still abort.
		case !g.c.live(tp.Topic, o):
			stale = append(stale, metadata.OffsetWrite{GroupPartition: tp})
		case g.expiredLocked(tp.Topic, o, now, retention):
			expired = append(expired, metadata.OffsetWrite{GroupPartition: tp})
		}
	}
	gone := len(stale) + len(expired)
	if g.state == StateEmpty && len(g.members) == 0 && len(g.pending) == 0 && gone == len(g.offsets) && !g.hasTxnOffsetsLocked() {
		wg.Add(1)
		g.deleteLocked("empty, with no offsets left after offsets.retention.minutes", func(error) { wg.Done() })
		return
	}
	if gone == 0 {
		return
	}
	g.c.lg.Info("group offsets expired", "group", g.id, "expired", len(expired), "deleted_topics", len(stale),
		"reason", "offsets.retention.minutes, or topic deleted")
	wg.Add(1)
	g.queueOffsetsLocked(append(stale, expired...), func(errs []error) {
		for _, err := range errs {
			if err != nil {
				g.c.lg.Warn("group offsets not expired", "group", g.id, "err", err)
				break
			}
		}
		wg.Done()
	})
}

// expiredLocked applies Kafka's retention rules (KIP-211, KIP-496): the
// offsets of an empty group expire together, retention after it emptied;
// standalone commits (a group that never had members) each retention after
// their commit; a stable consumer group's offsets of topics no member
// subscribes to, retention after their commit. Nothing else expires.
func (g *group) expiredLocked(topic string, o *offsetState, now time.Time, retention time.Duration) bool {
	committed := time.UnixMilli(o.CommitMs)
	switch {
	case g.state == StateEmpty && g.protocolType != "":
		return now.Sub(g.stateSince) >= retention
	case g.state == StateEmpty:
		return now.Sub(committed) >= retention
	case g.state == StateStable:
		subs, known := g.subscribedLocked()
		return known && !subs[topic] && now.Sub(committed) >= retention
	}
	return false
}
