package protocol

// AddOffsetsToTxn v0–v4. A transactional producer that is about to commit
// a consumer group's offsets in its transaction (TxnOffsetCommit) first
// adds the group to the transaction, so that ending it completes the
// group's pending offsets. The transaction coordinator answers, with its
// record durable first; the answer waits on the writer (request.wait).
// Before v2 PRODUCER_FENCED is INVALID_PRODUCER_EPOCH. v4 only announces
// that the client understands TRANSACTION_ABORTABLE (KIP-890), which
// transaction version 1 never answers.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/txncoord"
)

func init() { register(kmsg.AddOffsetsToTxn, 0, 4, handleAddOffsetsToTxn) }

// addOffsetsFencedSince is the first AddOffsetsToTxn version that knows
// PRODUCER_FENCED.
const addOffsetsFencedSince = 2

func handleAddOffsetsToTxn(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.AddOffsetsToTxnRequest)
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	r.wait = func() {
		resp.ErrorCode = r.txnCallCode("AddOffsetsToTxn", req.TransactionalID, req.Version, addOffsetsFencedSince,
			func(c *txncoord.Coordinator) error {
				return c.AddOffsets(r.ctx(), req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group)
			})
	}
	return resp, nil
}
