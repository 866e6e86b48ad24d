package txncoord

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/pprof"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Backoff of the marker writer between failed attempts.
const (
	markerBackoffMin = 20 * time.Millisecond
	markerBackoffMax = 2 * time.Second
)

// EndTxn commits or aborts the producer's open transaction: it stores
// PrepareCommit or PrepareAbort and answers, then the markers are
// written and CompleteCommit or CompleteAbort stored. Kafka's answers:
// an EndTxn repeated after completion with the same outcome succeeds, one
// repeated while the markers are written answers CONCURRENT_TRANSACTIONS,
// the other outcome or no open transaction INVALID_TXN_STATE.
func (c *Coordinator) EndTxn(ctx context.Context, txnID string, pid int64, epoch int16, commit bool) error {
	if txnID == "" {
		return fmt.Errorf("txncoord: end transaction: empty transactional id: %w", kerr.InvalidRequest)
	}
	sh, err := c.enter(txnID)
	if err != nil {
		return err
	}
	defer sh.wg.Done()
	t, err := sh.lockTxn(txnID, false)
	if err != nil {
		return err
	}
	if t == nil {
		return fmt.Errorf("txncoord: end transaction of %q: %w", txnID, kerr.InvalidProducerIDMapping)
	}
	phase, err := c.endLocked(t, pid, epoch, commit)
	t.mu.Unlock()
	if phase != "" {
		c.prepared(t, phase)
	}
	return err
}

// endLocked is EndTxn on the locked t; phase names the hook to call once
// t is unlocked ("" none).
func (c *Coordinator) endLocked(t *txn, pid int64, epoch int16, commit bool) (phase string, err error) {
	r := t.rec
	switch {
	case !t.exists() || r.pid != pid:
		return "", fmt.Errorf("txncoord: end transaction of %q: producer id %d is not its producer: %w", t.id, pid, kerr.InvalidProducerIDMapping)
	case r.epoch != epoch:
		return "", fmt.Errorf("txncoord: end transaction of %q: epoch %d, current %d: %w", t.id, epoch, r.epoch, kerr.ProducerFenced)
	case t.writing:
		return "", fmt.Errorf("txncoord: end transaction of %q: %w", t.id, kerr.ConcurrentTransactions)
	}
	target, done := PrepareAbort, CompleteAbort
	if commit {
		target, done = PrepareCommit, CompleteCommit
	}
	switch r.state {
	case Ongoing:
		next := r
		next.state, next.updateMs = target, c.now()
		if err := c.storeLocked(t, next); err != nil {
			return "", err
		}
		if commit {
			return "after-prepare-commit", nil
		}
		return "after-prepare-abort", nil
	case done:
		return "", nil
	case target:
		return "", fmt.Errorf("txncoord: end transaction of %q: markers being written: %w", t.id, kerr.ConcurrentTransactions)
	}
	return "", fmt.Errorf("txncoord: end transaction of %q (commit %v) in state %v: %w", t.id, commit, r.state, kerr.InvalidTxnState)
}

// fenceLocked bumps the epoch of t's Ongoing transaction (fencing its
// producer) and stores PrepareAbort under the new epoch, then has it
// aborted (Kafka's PrepareEpochFence followed by the abort, stored as one
// write); the caller then calls prepared. A newer InitProducerId and the
// timeout sweep do this.
func (c *Coordinator) fenceLocked(t *txn) error {
	next := t.rec
	if next.epoch < math.MaxInt16 {
		next.epoch++
	}
	next.lastPid, next.lastEpoch = t.rec.pid, noEpoch
	next.state, next.updateMs = PrepareAbort, c.now()
	return c.storeLocked(t, next)
}

// prepared follows a durable Prepare* of t (t unlocked): the hook of the
// phase first, so that a crash test stops before any marker, then the
// marker writer.
func (c *Coordinator) prepared(t *txn, phase string) {
	c.hook(phase)
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.gone && (t.rec.state == PrepareCommit || t.rec.state == PrepareAbort) {
		c.completeLocked(t)
	}
}

// completeLocked starts the marker writer of t's Prepare* transaction
// unless one runs already, or the shard is going away (its next owner
// completes it).
func (c *Coordinator) completeLocked(t *txn) {
	if t.completing || !t.sh.begin() {
		return
	}
	t.completing = true
	go pprof.Do(t.sh.ctx, pprof.Labels("sediment", "txncoord-markers"), func(context.Context) {
		defer t.sh.wg.Done()
		c.complete(t)
	})
}

// complete writes t's markers until they are durable, then stores
// Complete*. It gives up when the shard is released or dropped.
func (c *Coordinator) complete(t *txn) {
	t.mu.Lock()
	rec, sh := t.rec, t.sh
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.completing = false
		t.mu.Unlock()
	}()
	if rec.state != PrepareCommit && rec.state != PrepareAbort {
		return
	}
	commit := rec.state == PrepareCommit
	req := MarkerRequest{TransactionalID: t.id, ProducerID: rec.pid, ProducerEpoch: rec.epoch, Commit: commit,
		CoordinatorEpoch: sh.epoch, Partitions: rec.partitions, Groups: rec.groups}
	if !c.retry(sh, "write transaction markers", t.id, func() error { return c.cfg.Markers.WriteMarkers(sh.ctx, req) }) {
		return
	}
	next := rec
	next.state, next.partitions, next.groups = CompleteAbort, nil, nil
	if commit {
		next.state = CompleteCommit
	}
	stored := c.retry(sh, "store the completed transaction", t.id, func() error {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.gone || t.rec.state != rec.state || t.rec.epoch != rec.epoch {
			return errStale
		}
		next.updateMs = c.now()
		return c.storeLocked(t, next)
	})
	if !stored {
		return
	}
	c.m.completed(commit)
	c.hook("after-complete")
}

// errStale: the record moved on under the marker writer, which stops.
var errStale = errors.New("txncoord: transaction record changed while its markers were written")

// retry calls f with backoff until it returns nil (true), or the shard
// is going away or f says the work is stale (false).
func (c *Coordinator) retry(sh *shard, what, id string, f func() error) bool {
	backoff := markerBackoffMin
	for attempt := 1; ; attempt++ {
		err := f()
		switch {
		case err == nil:
			return true
		case errors.Is(err, errStale):
			return false
		case sh.ctx.Err() != nil || !c.writable(sh) || errors.Is(err, kerr.TransactionCoordinatorFenced):
			c.lg.Info("transaction coordinator stopped: its shard moved", "what", what, "transactional_id", id, "err", err)
			return false
		}
		if attempt == 1 || attempt%10 == 0 {
			c.lg.Warn("transaction coordinator retrying", "what", what, "transactional_id", id, "attempt", attempt, "err", err)
		}
		timer := time.NewTimer(backoff)
		select {
		case <-sh.ctx.Done():
			timer.Stop()
			return false
		case <-timer.C:
		}
		backoff = min(2*backoff, markerBackoffMax)
	}
}
