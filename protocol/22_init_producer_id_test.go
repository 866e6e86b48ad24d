package protocol

import (
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

func TestInitProducerIDTransactionalRefused(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := b.dial()
	for _, v := range []int16{0, 2, 5} {
		resp := roundTrip[*kmsg.InitProducerIDResponse](c, initProducerIDReq(v, ptr("txn-1")))
		wantCode(t, "transactional id", resp.ErrorCode, kerr.TransactionalIDAuthorizationFailed.Code)
		if resp.ProducerID != -1 || resp.ProducerEpoch != -1 {
			t.Fatalf("v%d: refused answer carries producer id %d epoch %d", v, resp.ProducerID, resp.ProducerEpoch)
		}
	}
}
