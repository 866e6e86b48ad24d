package txncoord

import (
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// AddPartitions adds partitions to the producer's transaction, starting
// one if none is open, and answers once the record is durable. When a
// partition does not exist nothing is added: it answers
// UNKNOWN_TOPIC_OR_PARTITION for it and OPERATION_NOT_ATTEMPTED for the
// others (as Kafka). With VerifyOnly it adds nothing and answers, per
// partition, whether it is in the open transaction (nil) or not
// (INVALID_TXN_STATE): KIP-890 part 1. Errors of the whole request
// (producer id or epoch, state, coordinator) come as the second result.
func (c *Coordinator) AddPartitions(ctx context.Context, req AddPartitionsRequest) (map[TopicPartition]error, error) {
	if req.TransactionalID == "" {
		return nil, fmt.Errorf("txncoord: add partitions: empty transactional id: %w", kerr.InvalidRequest)
	}
	if !req.VerifyOnly {
		if errs := c.unknownPartitions(req.Partitions); errs != nil {
			return errs, nil
		}
	}
	sh, err := c.enter(req.TransactionalID)
	if err != nil {
		return nil, err
	}
	defer sh.wg.Done()
	t, err := c.lockProducer(sh, req.TransactionalID, req.ProducerID, req.ProducerEpoch)
	if err != nil {
		return nil, err
	}
	if req.VerifyOnly {
		defer t.mu.Unlock()
		return t.verifyLocked(req.Partitions)
	}
	wrote, err := c.addLocked(t, req.Partitions, nil)
	t.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if wrote {
		c.hook("after-add-partitions")
	}
	out := make(map[TopicPartition]error, len(req.Partitions))
	for _, tp := range req.Partitions {
		out[tp] = nil
	}
	return out, nil
}

// unknownPartitions returns the per-partition answer of a request naming
// a partition that does not exist, nil when all exist.
func (c *Coordinator) unknownPartitions(parts []TopicPartition) map[TopicPartition]error {
	if c.cfg.Topics == nil {
		return nil
	}
	var out map[TopicPartition]error
	for _, tp := range parts {
		if n, ok := c.cfg.Topics(tp.Topic); !ok || tp.Partition < 0 || tp.Partition >= n {
			if out == nil {
				out = make(map[TopicPartition]error, len(parts))
			}
			out[tp] = kerr.UnknownTopicOrPartition
		}
	}
	for _, tp := range parts {
		if out != nil && out[tp] == nil {
			out[tp] = kerr.OperationNotAttempted
		}
	}
	return out
}

// AddOffsets adds a group's offsets to the producer's transaction (Kafka
// adds the group's __consumer_offsets partition), starting one if none is
// open; its pending offsets are committed or dropped with the markers.
func (c *Coordinator) AddOffsets(ctx context.Context, txnID string, pid int64, epoch int16, group string) error {
	if txnID == "" {
		return fmt.Errorf("txncoord: add offsets: empty transactional id: %w", kerr.InvalidRequest)
	}
	sh, err := c.enter(txnID)
	if err != nil {
		return err
	}
	defer sh.wg.Done()
	t, err := c.lockProducer(sh, txnID, pid, epoch)
	if err != nil {
		return err
	}
	defer t.mu.Unlock()
	_, err = c.addLocked(t, nil, []string{group})
	return err
}

// lockProducer returns id's txn locked, after Kafka's checks of the
// producer: its id (INVALID_PRODUCER_ID_MAPPING) and epoch
// (PRODUCER_FENCED).
func (c *Coordinator) lockProducer(sh *shard, id string, pid int64, epoch int16) (*txn, error) {
	t, err := sh.lockTxn(id, false)
	if err != nil {
		return nil, err
	}
	switch {
	case t == nil:
		return nil, fmt.Errorf("txncoord: transactional id %q has no producer: %w", id, kerr.InvalidProducerIDMapping)
	case !t.exists() || t.rec.pid != pid:
		t.mu.Unlock()
		return nil, fmt.Errorf("txncoord: producer id %d is not that of %q: %w", pid, id, kerr.InvalidProducerIDMapping)
	case t.rec.epoch != epoch:
		cur := t.rec.epoch
		t.mu.Unlock()
		return nil, fmt.Errorf("txncoord: %q: producer epoch %d, current %d: %w", id, epoch, cur, kerr.ProducerFenced)
	}
	return t, nil
}

// addLocked adds partitions and groups to t's transaction; wrote says
// whether the record had to be written.
func (c *Coordinator) addLocked(t *txn, parts []TopicPartition, groups []string) (wrote bool, err error) {
	r := t.rec
	switch {
	case t.writing || r.state.inFlight():
		return false, fmt.Errorf("txncoord: add to the transaction of %q in state %v: %w", t.id, r.state, kerr.ConcurrentTransactions)
	case r.state == Ongoing && containsAll(r.partitions, parts) && containsAll(r.groups, groups):
		return false, nil
	case r.state != Ongoing && !r.state.idle():
		return false, fmt.Errorf("txncoord: add to the transaction of %q in state %v: %w", t.id, r.state, kerr.InvalidTxnState)
	}
	if err := c.storeLocked(t, r.withAdded(parts, groups, c.now())); err != nil {
		return false, err
	}
	return true, nil
}

func containsAll[T comparable](have, want []T) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// verifyLocked answers a VerifyOnly AddPartitions.
func (t *txn) verifyLocked(parts []TopicPartition) (map[TopicPartition]error, error) {
	if t.rec.state.inFlight() {
		return nil, fmt.Errorf("txncoord: verify the transaction of %q in state %v: %w", t.id, t.rec.state, kerr.ConcurrentTransactions)
	}
	out := make(map[TopicPartition]error, len(parts))
	for _, tp := range parts {
		if t.rec.state == Ongoing && t.rec.includes(tp) {
			out[tp] = nil
		} else {
			out[tp] = fmt.Errorf("txncoord: %s/%d is not in the transaction of %q: %w", tp.Topic, tp.Partition, t.id, kerr.InvalidTxnState)
		}
	}
	return out, nil
}

// includes says whether tp is in r's transaction: one of its partitions,
// or the offsets partition of one of its groups (GroupPartition), which
// is how Kafka's transaction holds a group added with AddOffsets.
func (r record) includes(tp TopicPartition) bool {
	if slices.Contains(r.partitions, tp) {
		return true
	}
	return tp.Topic == offsetsTopic && slices.ContainsFunc(r.groups, func(g string) bool { return ShardOf(g) == tp.Partition })
}

// Verify answers a partition leader's KIP-890 part-1 check of a
// transactional produce, and a group coordinator's check of a
// TxnOffsetCommit (tp is then the group's GroupPartition): nil when txnID
// is Ongoing with (pid, epoch) and tp is in its transaction; else
// INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED, CONCURRENT_TRANSACTIONS
// (markers being written) or INVALID_TXN_STATE.
func (c *Coordinator) Verify(ctx context.Context, txnID string, pid int64, epoch int16, tp TopicPartition) error {
	sh, err := c.enter(txnID)
	if err != nil {
		return err
	}
	defer sh.wg.Done()
	t, err := c.lockProducer(sh, txnID, pid, epoch)
	if err != nil {
		return err
	}
	defer t.mu.Unlock()
	errs, err := t.verifyLocked([]TopicPartition{tp})
	if err != nil {
		return err
	}
	return errs[tp]
}
