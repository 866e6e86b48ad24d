package protocol

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/storage/partition"
	"github.com/sediment-io/sediment/storage/record"
	"github.com/sediment-io/sediment/txncoord"
)

// Batch attribute bits of a transactional batch and of a control batch
// (a commit or abort marker), frozen by Kafka's record format v2.
const (
	attrTransactional = 0x10
	attrControl       = 0x20
)

// txnBatch is the producer of a transactional batch.
type txnBatch struct {
	pid   int64
	epoch int16
}

// txnBatchOf reads the producer of records' first batch; ok is false when
// it is not a transactional data batch (or too short to tell: the log
// refuses it then). A control batch is not one: clients may not write
// them, and the log refuses it.
func txnBatchOf(records []byte) (tb txnBatch, ok bool) {
	if len(records) < record.BatchHeaderLen {
		return txnBatch{}, false
	}
	h := record.ReadHeader(records)
	if h.Attributes&attrTransactional == 0 || h.Attributes&attrControl != 0 {
		return txnBatch{}, false
	}
	return txnBatch{h.ProducerID, h.ProducerEpoch}, true
}

// produceTxnCheck refuses, as Kafka's KafkaApis and ReplicaManager do for
// the whole request, transactional batches without the request's
// transactional id, and transactional batches of more than one producer.
func produceTxnCheck(req *kmsg.ProduceRequest) (int16, error) {
	var first txnBatch
	seen := false
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			tb, ok := txnBatchOf(rp.Records)
			switch {
			case !ok:
			case req.TransactionID == nil:
				return kerr.TransactionalIDAuthorizationFailed.Code, errors.New("transactional records need the request's transactional id")
			case seen && tb != first:
				return kerr.InvalidProducerIDMapping.Code, errors.New("transactional records of more than one producer id and epoch")
			default:
				first, seen = tb, true
			}
		}
	}
	return 0, nil
}

// verifyTxn checks that p is in tb's ongoing transaction before p accepts
// its batch, unless the producer's transaction is open in p already
// (KIP-890 part 1): it keeps a late batch of a transaction that ended from
// opening a new one that nobody would end. It returns the code a produce
// answers, mapped as Kafka's ReplicaManager maps the coordinator's: a
// partition not in the transaction is INVALID_TXN_STATE, a fenced producer
// INVALID_PRODUCER_EPOCH, and a coordinator that cannot tell now
// NOT_ENOUGH_REPLICAS, which every client retries without refreshing its
// metadata.
func (r *request) verifyTxn(ctx context.Context, req *kmsg.ProduceRequest, p *partition.Partition, tb txnBatch) (int16, error) {
	if p.HasOpenTxn(tb.pid, tb.epoch) {
		return 0, nil
	}
	verify := r.s.txnVerifier()
	if verify == nil {
		return kerr.NotEnoughReplicas.Code, errors.New("unable to verify the partition has been added to the transaction: no transaction coordinator")
	}
	tp := txncoord.TopicPartition{Topic: p.Topic().Name, Partition: p.Index()}
	err := verify(ctx, *req.TransactionID, tb.pid, tb.epoch, tp)
	if err == nil {
		return 0, nil
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		r.s.lg.Warn("transaction verification failed", "transactional_id", *req.TransactionID, "topic", tp.Topic, "partition", tp.Partition, "err", err)
		return kerr.NotEnoughReplicas.Code, fmt.Errorf("unable to verify the partition has been added to the transaction: %w", err)
	}
	switch ke.Code {
	case kerr.InvalidTxnState.Code, kerr.TransactionAbortable.Code:
		return kerr.InvalidTxnState.Code, errors.New("partition was not added to the transaction")
	case kerr.ProducerFenced.Code:
		return kerr.InvalidProducerEpoch.Code, err
	case kerr.ConcurrentTransactions.Code, kerr.NetworkException.Code, kerr.CoordinatorLoadInProgress.Code,
		kerr.CoordinatorNotAvailable.Code, kerr.NotCoordinator.Code, kerr.RequestTimedOut.Code:
		return kerr.NotEnoughReplicas.Code, fmt.Errorf("unable to verify the partition has been added to the transaction: %w", err)
	}
	return ke.Code, err
}
