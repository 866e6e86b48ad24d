package protocol

import (
	"fmt"
	"testing"

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
