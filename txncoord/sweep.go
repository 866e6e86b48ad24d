package txncoord

import (
	"context"
	"time"
)

// runSweeps aborts timed-out transactions every AbortSweepInterval and
// removes expired transactional ids every ExpireSweepInterval, until ctx
// ends.
func (c *Coordinator) runSweeps(ctx context.Context) {
	abort := time.NewTicker(c.cfg.AbortSweepInterval)
	defer abort.Stop()
	expire := time.NewTicker(c.cfg.ExpireSweepInterval)
	defer expire.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-abort.C:
			c.abortTimedOut()
		case <-expire.C:
			c.expireIDs()
		}
	}
}

// abortTimedOut fences and aborts every Ongoing transaction open longer
// than its timeout (Kafka's abortTimedOutTransactions): the producer's
// epoch is bumped, so its later writes are refused.
func (c *Coordinator) abortTimedOut() {
	now := c.now()
	for _, sh := range c.ownedShards() {
		if !sh.begin() {
			continue
		}
		for _, t := range sh.snapshot() {
			if c.abortIfTimedOut(t, now) {
				c.prepared(t, "after-prepare-abort")
			}
		}
		sh.wg.Done()
	}
}

// abortIfTimedOut fences and aborts t's transaction if it is Ongoing past
// its timeout; it says whether it did.
func (c *Coordinator) abortIfTimedOut(t *txn, now int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.rec
	if t.gone || !t.exists() || t.writing || r.state != Ongoing || r.startMs+int64(r.timeoutMs) >= now {
		return false
	}
	if err := c.fenceLocked(t); err != nil {
		return false
	}
	c.m.timedOut.Inc()
	c.lg.Info("transaction timed out: aborting it", "transactional_id", t.id, "producer_id", r.pid,
		"epoch", t.rec.epoch, "timeout_ms", r.timeoutMs)
	return true
}

// expireIDs deletes the records of transactional ids idle (Empty or
// Complete*) for longer than IDExpiration (Kafka's
// removeExpiredTransactionalIds, through Dead).
func (c *Coordinator) expireIDs() {
	now := c.now()
	for _, sh := range c.ownedShards() {
		if !sh.begin() {
			continue
		}
		for _, t := range sh.snapshot() {
			t.mu.Lock()
			r := t.rec
			if !t.gone && t.exists() && !t.writing && !t.completing && r.state.idle() &&
				r.updateMs+c.cfg.IDExpiration.Milliseconds() <= now {
				dead := r
				dead.state = Dead
				if err := c.storeLocked(t, dead); err == nil {
					t.forgetLocked()
					c.lg.Info("transactional id expired", "transactional_id", t.id, "producer_id", r.pid)
				}
			}
			t.mu.Unlock()
		}
		sh.wg.Done()
	}
}
