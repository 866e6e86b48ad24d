package txncoord

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// InitProducerID gives a transactional producer its producer id and
// epoch, as Kafka's handleInitProducerId:
//   - a new transactional id gets a new producer id, epoch 0;
//   - an idle one (Empty, Complete*) gets its epoch bumped, which fences
//     every earlier session; an exhausted epoch gets a new producer id;
//   - an Ongoing one has its transaction fenced (epoch bump) and aborted,
//     and the caller is answered CONCURRENT_TRANSACTIONS until the abort is
//     done (it retries, and gets a second bump);
//   - with ProducerID and ProducerEpoch given (KIP-360), they must be the
//     current ones (bumped), or the ones a lost answer gave (answered
//     again, unbumped); anything else is PRODUCER_FENCED.
//
// The record is durable before it answers.
func (c *Coordinator) InitProducerID(ctx context.Context, req InitRequest) (InitResult, error) {
	if req.TransactionalID == "" {
		return InitResult{}, fmt.Errorf("txncoord: init producer id: empty transactional id: %w", kerr.InvalidRequest)
	}
	if req.TimeoutMs <= 0 || time.Duration(req.TimeoutMs)*time.Millisecond > c.cfg.MaxTimeout {
		return InitResult{}, fmt.Errorf("txncoord: init producer id: transaction timeout %d ms outside (0, %d] (transaction.max.timeout.ms): %w",
			req.TimeoutMs, c.cfg.MaxTimeout.Milliseconds(), kerr.InvalidTransactionTimeout)
	}
	sh, err := c.enter(req.TransactionalID)
	if err != nil {
		return InitResult{}, err
	}
	defer sh.wg.Done()
	t, err := sh.lockTxn(req.TransactionalID, true)
	if err != nil {
		return InitResult{}, err
	}
	res, phase, err := c.initLocked(ctx, t, req)
	t.mu.Unlock()
	if phase != "" {
		c.prepared(t, phase)
	}
	return res, err
}

// initLocked is InitProducerID on the locked t; phase names the hook to
// call once t is unlocked.
func (c *Coordinator) initLocked(ctx context.Context, t *txn, req InitRequest) (InitResult, string, error) {
	if t.writing {
		return InitResult{}, "", fmt.Errorf("txncoord: init producer id of %q: %w", t.id, kerr.ConcurrentTransactions)
	}
	r := t.rec
	expected := req.ProducerID != noProducerID
	if !t.exists() {
		return c.initNewLocked(ctx, t, req)
	}
	if expected && !validExpectedID(r, req) {
		return InitResult{}, "", fmt.Errorf("txncoord: init producer id of %q: producer %d epoch %d is not its producer: %w",
			t.id, req.ProducerID, req.ProducerEpoch, kerr.ProducerFenced)
	}
	switch {
	case r.state == Ongoing:
		if err := c.fenceLocked(t); err != nil {
			return InitResult{}, "", err
		}
		c.lg.Info("transaction fenced by a new producer session: aborting it", "transactional_id", t.id,
			"producer_id", r.pid, "epoch", t.rec.epoch)
		return InitResult{}, "after-prepare-abort", fmt.Errorf("txncoord: init producer id of %q: the open transaction is being aborted: %w",
			t.id, kerr.ConcurrentTransactions)
	case !r.state.idle():
		return InitResult{}, "", fmt.Errorf("txncoord: init producer id of %q in state %v: %w", t.id, r.state, kerr.ConcurrentTransactions)
	case epochExhausted(r.epoch) && (!expected || req.ProducerEpoch == r.epoch):
		return c.rotateLocked(ctx, t, req)
	}
	next, err := bumpedEpoch(r, req)
	if err != nil {
		return InitResult{}, "", fmt.Errorf("txncoord: init producer id of %q: %w", t.id, err)
	}
	next.timeoutMs, next.state = req.TimeoutMs, Empty
	next.partitions, next.groups, next.startMs, next.updateMs = nil, nil, -1, c.now()
	if err := c.storeLocked(t, next); err != nil {
		return InitResult{}, "", err
	}
	return InitResult{ProducerID: next.pid, ProducerEpoch: next.epoch}, "", nil
}

// validExpectedID is Kafka's isValidProducerId: a KIP-360 request names
// the current producer id (its epoch is checked by bumpedEpoch), or the
// previous one with an exhausted epoch (a retry whose answer, a new
// producer id, was lost).
func validExpectedID(r record, req InitRequest) bool {
	return r.epoch == noEpoch || req.ProducerID == r.pid ||
		(req.ProducerID == r.lastPid && epochExhausted(req.ProducerEpoch))
}

// bumpedEpoch is Kafka's prepareIncrementProducerEpoch: the epoch and
// last epoch an idle record gets.
func bumpedEpoch(r record, req InitRequest) (record, error) {
	next := r
	switch {
	case req.ProducerID == noProducerID:
		// A new session: earlier ones cannot retry into it.
		next.epoch, next.lastEpoch = r.epoch+1, noEpoch
	case r.epoch == noEpoch || req.ProducerEpoch == r.epoch:
		next.epoch, next.lastEpoch = r.epoch+1, r.epoch
	case req.ProducerEpoch == r.lastEpoch:
		// A retry of a bump whose answer was lost: the same answer again.
	default:
		return record{}, fmt.Errorf("epoch %d is neither the current %d nor the previous %d: %w",
			req.ProducerEpoch, r.epoch, r.lastEpoch, kerr.ProducerFenced)
	}
	return next, nil
}

// initNewLocked stores a new transactional id with a new producer id.
func (c *Coordinator) initNewLocked(ctx context.Context, t *txn, req InitRequest) (InitResult, string, error) {
	pid, err := c.nextProducerIDLocked(ctx, t)
	if err != nil {
		return InitResult{}, "", err
	}
	if t.exists() || t.gone {
		// Another init stored the id while the producer id was allocated.
		return InitResult{}, "", fmt.Errorf("txncoord: init producer id of %q: %w", t.id, kerr.ConcurrentTransactions)
	}
	next := record{pid: pid, lastPid: noProducerID, epoch: 0, lastEpoch: noEpoch, timeoutMs: req.TimeoutMs,
		state: Empty, startMs: -1, updateMs: c.now()}
	if err := c.storeLocked(t, next); err != nil {
		return InitResult{}, "", err
	}
	return InitResult{ProducerID: pid, ProducerEpoch: 0}, "", nil
}

// rotateLocked gives an idle id whose epoch is exhausted a new producer
// id (Kafka's prepareProducerIdRotation); a KIP-360 caller's epoch is kept
// as the last epoch, so that its retry gets the same answer.
func (c *Coordinator) rotateLocked(ctx context.Context, t *txn, req InitRequest) (InitResult, string, error) {
	r := t.rec
	pid, err := c.nextProducerIDLocked(ctx, t)
	if err != nil {
		return InitResult{}, "", err
	}
	if t.gone || t.rec.pid != r.pid || t.rec.epoch != r.epoch {
		return InitResult{}, "", fmt.Errorf("txncoord: init producer id of %q: %w", t.id, kerr.ConcurrentTransactions)
	}
	next := record{pid: pid, lastPid: r.pid, epoch: 0, lastEpoch: noEpoch, timeoutMs: req.TimeoutMs,
		state: Empty, startMs: -1, updateMs: c.now()}
	if req.ProducerID != noProducerID {
		next.lastEpoch = r.epoch
	}
	if err := c.storeLocked(t, next); err != nil {
		return InitResult{}, "", err
	}
	c.lg.Info("producer epoch exhausted: new producer id", "transactional_id", t.id, "old_producer_id", r.pid, "producer_id", pid)
	return InitResult{ProducerID: pid, ProducerEpoch: 0}, "", nil
}

// nextProducerIDLocked allocates a producer id with t unlocked meanwhile
// (t.writing keeps other transitions out).
func (c *Coordinator) nextProducerIDLocked(ctx context.Context, t *txn) (int64, error) {
	t.writing = true
	t.mu.Unlock()
	pid, err := c.cfg.ProducerIDs.Next(ctx)
	t.mu.Lock()
	t.writing = false
	if err != nil {
		if !t.exists() {
			t.forgetLocked()
		}
		return 0, fmt.Errorf("txncoord: allocate a producer id for %q: %w: %w", t.id, kerr.CoordinatorNotAvailable, err)
	}
	return pid, nil
}
