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
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.AddOffsetsToTxn, 0, 4, handleAddOffsetsToTxn) }

// addOffsetsFencedSince is the first AddOffsetsToTxn version that knows
// PRODUCER_FENCED.
const addOffsetsFencedSince = 2

func handleAddOffsetsToTxn(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.AddOffsetsToTxnRequest)
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	r.wait = func() {
		switch {
		case req.TransactionalID == "":
			resp.ErrorCode = r.code(kerr.InvalidRequest.Code)
		case r.s.cfg.Txns == nil:
			resp.ErrorCode = r.code(errTxnsNotRunning.Code)
		default:
			err := r.s.cfg.Txns.AddOffsets(r.ctx(), req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group)
			r.logTxnFailure("AddOffsetsToTxn", err)
			resp.ErrorCode = r.code(txnCode(err, req.Version, addOffsetsFencedSince))
		}
	}
	return resp, nil
}
