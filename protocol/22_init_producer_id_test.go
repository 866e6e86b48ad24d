package protocol

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func initProducerIDReq(version int16, txnID *string) *kmsg.InitProducerIDRequest {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version, req.TransactionalID, req.TransactionTimeoutMillis = version, txnID, 60000
	req.ProducerID, req.ProducerEpoch = -1, -1
	return req
}

func TestInitProducerID(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := b.dial()
	seen := map[int64]bool{}
	for v := int16(0); v <= 5; v++ {
		for range 2 {
			resp := roundTrip[*kmsg.InitProducerIDResponse](c, initProducerIDReq(v, nil))
			wantCode(t, "InitProducerId", resp.ErrorCode, 0)
			if resp.ProducerID < 0 || resp.ProducerEpoch != 0 || seen[resp.ProducerID] {
				t.Fatalf("v%d: producer id %d epoch %d (seen before: %v)", v, resp.ProducerID, resp.ProducerEpoch, seen[resp.ProducerID])
			}
			seen[resp.ProducerID] = true
		}
	}
	// A KIP-360 epoch bump without a transactional id gets a fresh id too.
	req := initProducerIDReq(4, nil)
	req.ProducerID, req.ProducerEpoch = 1, 0
	resp := roundTrip[*kmsg.InitProducerIDResponse](c, req)
	wantCode(t, "epoch bump", resp.ErrorCode, 0)
	if seen[resp.ProducerID] {
		t.Fatalf("epoch bump reused producer id %d", resp.ProducerID)
	}
	// A second connection never sees the same ids either.
	resp = roundTrip[*kmsg.InitProducerIDResponse](b.dial(), initProducerIDReq(3, nil))
	if seen[resp.ProducerID] {
		t.Fatalf("a second connection got producer id %d again", resp.ProducerID)
	}
}

// TestInitProducerIDInvalid: an empty transactional id, and a producer id
// without an epoch (or the reverse), are INVALID_REQUEST, as in Kafka.
func TestInitProducerIDInvalid(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := b.dial()
	for _, req := range []*kmsg.InitProducerIDRequest{initTxnReq(5, "", -1, -1), initTxnReq(3, "txn", 5, -1), initTxnReq(4, "txn", -1, 0)} {
		resp := roundTrip[*kmsg.InitProducerIDResponse](c, req)
		wantCode(t, fmt.Sprintf("id %q producer %d epoch %d", *req.TransactionalID, req.ProducerID, req.ProducerEpoch), resp.ErrorCode, kerr.InvalidRequest.Code)
		if resp.ProducerID != -1 || resp.ProducerEpoch != -1 {
			t.Fatalf("refused answer carries producer id %d epoch %d", resp.ProducerID, resp.ProducerEpoch)
		}
	}
	idem := initProducerIDReq(3, nil)
	idem.ProducerID = 9
	wantCode(t, "idempotent producer id without an epoch", roundTrip[*kmsg.InitProducerIDResponse](c, idem).ErrorCode, kerr.InvalidRequest.Code)
}

// TestInitProducerIDTransactional: a transactional id's first init gets
// epoch 0, a later one the next epoch; a KIP-360 retry naming the current
// producer id and epoch bumps it too; a timeout above
// transaction.max.timeout.ms is INVALID_TRANSACTION_TIMEOUT.
func TestInitProducerIDTransactional(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := b.dial()
	first := roundTrip[*kmsg.InitProducerIDResponse](c, initTxnReq(0, "kip360", -1, -1))
	wantCode(t, "first init", first.ErrorCode, 0)
	if first.ProducerID < 0 || first.ProducerEpoch != 0 {
		t.Fatalf("first init: producer %d epoch %d", first.ProducerID, first.ProducerEpoch)
	}
	again := roundTrip[*kmsg.InitProducerIDResponse](c, initTxnReq(3, "kip360", first.ProducerID, first.ProducerEpoch))
	wantCode(t, "KIP-360 init", again.ErrorCode, 0)
	if again.ProducerID != first.ProducerID || again.ProducerEpoch != 1 {
		t.Fatalf("KIP-360 init: producer %d epoch %d, want %d epoch 1", again.ProducerID, again.ProducerEpoch, first.ProducerID)
	}
	long := initTxnReq(5, "kip360", -1, -1)
	long.TransactionTimeoutMillis = int32((16 * time.Minute).Milliseconds())
	wantCode(t, "timeout over the maximum", roundTrip[*kmsg.InitProducerIDResponse](c, long).ErrorCode, kerr.InvalidTransactionTimeout.Code)
}

// TestTxnAPIsWithoutCoordinator: without a transaction coordinator every
// transaction API answers COORDINATOR_NOT_AVAILABLE, which clients retry,
// and a transactional batch cannot be verified (NOT_ENOUGH_REPLICAS).
func TestTxnAPIsWithoutCoordinator(t *testing.T) {
	t.Parallel()
	b := startBroker(t, withoutTxns())
	b.createTopic("tx", 1, nil)
	c := b.dial()
	na := kerr.CoordinatorNotAvailable.Code
	find := kmsg.NewPtrFindCoordinatorRequest()
	find.Version, find.CoordinatorType, find.CoordinatorKeys = 4, 1, []string{"t"}
	wantCode(t, "FindCoordinator", roundTrip[*kmsg.FindCoordinatorResponse](c, find).Coordinators[0].ErrorCode, na)
	wantCode(t, "InitProducerId", roundTrip[*kmsg.InitProducerIDResponse](c, initTxnReq(4, "t", -1, -1)).ErrorCode, na)
	p := &txnProducer{t: t, c: c, id: "t", pid: 1, epoch: 0, seq: map[string]int32{}}
	wantCodes(t, "AddPartitionsToTxn", p.addPartitionsCodes(3, "tx", 0), na)
	wantCode(t, "AddOffsetsToTxn", p.addOffsets(3, "g"), na)
	wantCode(t, "EndTxn", p.end(3, true), na)
	list := kmsg.NewPtrListTransactionsRequest()
	wantCode(t, "ListTransactions", roundTrip[*kmsg.ListTransactionsResponse](c, list).ErrorCode, na)
	describe := kmsg.NewPtrDescribeTransactionsRequest()
	describe.TransactionalIDs = []string{"t"}
	wantCode(t, "DescribeTransactions", roundTrip[*kmsg.DescribeTransactionsResponse](c, describe).TransactionStates[0].ErrorCode, na)
	wantCode(t, "transactional produce", p.produce("tx", 0, 1).ErrorCode, kerr.NotEnoughReplicas.Code)
	// Idempotent producers do not need it.
	wantCode(t, "idempotent InitProducerId", roundTrip[*kmsg.InitProducerIDResponse](c, initProducerIDReq(4, nil)).ErrorCode, 0)
}
