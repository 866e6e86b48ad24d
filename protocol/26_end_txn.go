package protocol

// EndTxn v0–v4. A transactional producer commits or aborts its ongoing
// transaction. The transaction coordinator makes PrepareCommit or
// PrepareAbort durable before the answer (which waits on the writer,
// request.wait) and then writes the markers into every partition and
// completes the groups' offsets; an EndTxn out of turn is
// INVALID_TXN_STATE, and one racing a transition in flight
// CONCURRENT_TRANSACTIONS.
// Before v2 PRODUCER_FENCED is INVALID_PRODUCER_EPOCH. v5 (an epoch bump on
// every transaction, KIP-890 part 2) is not served: transaction.version 2
// is not advertised, and clients only send v5 when it is.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/txncoord"
)

func init() { register(kmsg.EndTxn, 0, 4, handleEndTxn) }

// endTxnFencedSince is the first EndTxn version that knows PRODUCER_FENCED.
const endTxnFencedSince = 2

func handleEndTxn(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.EndTxnRequest)
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	r.wait = func() {
		resp.ErrorCode = r.txnCallCode("EndTxn", req.TransactionalID, req.Version, endTxnFencedSince,
			func(c *txncoord.Coordinator) error {
				return c.EndTxn(r.ctx(), req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit)
			})
	}
	return resp, nil
}
