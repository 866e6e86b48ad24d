//go:build interop

package main

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestInteropDiffTransactions: what a transactional producer meets before
// transactions land (issue 19): Sediment refuses its InitProducerID and
// its produce, where Kafka serves the one and checks the other against the
// transaction's state.
func TestInteropDiffTransactions(t *testing.T) {
	d := newDiffRun(t)
	topic, txnID := diffTopic(t, "t"), diffTopic(t, "txn")
	d.same("CreateTopics", func() kmsg.Request { return createTopicReq(topic, 1, 1) })
	d.waitTopics(topic)
	d.initProducer("InitProducerID")
	// Kafka creates __transaction_state on the first FindCoordinator.
	d.settleOn(d.sides[1], "transaction coordinator", func(*diffSide) kmsg.Request {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.SetVersion(vFindCoord)
		req.CoordinatorType, req.CoordinatorKeys = 1, []string{txnID}
		return req
	}, func(r kmsg.Response) bool {
		c := r.(*kmsg.FindCoordinatorResponse).Coordinators
		return len(c) == 1 && c[0].ErrorCode == 0
	})
	d.settleOn(d.sides[1], "transactional id", func(*diffSide) kmsg.Request { return txnInitReq(txnID) }, func(r kmsg.Response) bool {
		return r.(*kmsg.InitProducerIDResponse).ErrorCode == 0
	})
	d.same("InitProducerID transactional", func() kmsg.Request { return txnInitReq(txnID) })
	d.exchange("Produce transactional", func(s *diffSide) kmsg.Request {
		b := diffBatch{timestamp: diffTS, producerID: s.producerID, epoch: s.producerEpoch, sequence: 0, values: []string{"t0"}}.encode()
		b[22] |= 0x10 // attributes: transactional
		req := produceReq(topic, 0, -1, fixCRC(b))
		req.TransactionID = kmsg.StringPtr(txnID)
		return req
	})
}

// txnInitReq asks for the producer id of a transactional id.
func txnInitReq(txnID string) *kmsg.InitProducerIDRequest {
	req := initProducerReq()
	req.TransactionalID = kmsg.StringPtr(txnID)
	return req
}
