package protocol

// InitProducerId v0–v5. Without a transactional id (idempotent producers)
// every call gets a fresh producer id at epoch 0, as Kafka does for them (a
// KIP-360 epoch bump request is answered the same way); ids come from
// metadata in blocks, so a restart never reuses one. With a transactional
// id the transaction coordinator (Config.Txns) answers: a new producer id,
// or the id's producer at the next epoch, fencing the previous one and
// aborting its open transaction; v3+ carries the producer's current id and
// epoch (KIP-360), which lets a producer whose epoch was bumped by a
// timeout resume. The coordinator's record is durable before the answer,
// which waits on the writer (request.wait). Before v4 a fenced producer is
// told INVALID_PRODUCER_EPOCH instead of PRODUCER_FENCED. An empty
// transactional id, or a producer id without an epoch (or the reverse), is
// INVALID_REQUEST.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/txncoord"
)

func init() { register(kmsg.InitProducerID, 0, 5, handleInitProducerID) }

// initFencedSince is the first InitProducerId version that knows
// PRODUCER_FENCED.
const initFencedSince = 4

func handleInitProducerID(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.InitProducerIDRequest)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if (req.ProducerID == -1) != (req.ProducerEpoch == -1) {
		resp.ErrorCode = r.code(kerr.InvalidRequest.Code)
		return resp, nil
	}
	if req.TransactionalID != nil {
		r.wait = func() { r.initTransactional(req, resp) }
		return resp, nil
	}
	if r.s.cfg.ProducerIDs == nil {
		resp.ErrorCode = r.code(kerr.CoordinatorNotAvailable.Code)
		return resp, nil
	}
	id, err := r.s.cfg.ProducerIDs.Next(r.ctx())
	if err != nil {
		r.s.lg.Warn("producer id allocation failed", "err", err)
		resp.ErrorCode = r.code(kerr.CoordinatorNotAvailable.Code) // retriable
		return resp, nil
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return resp, nil
}

// initTransactional answers an InitProducerId with a transactional id.
func (r *request) initTransactional(req *kmsg.InitProducerIDRequest, resp *kmsg.InitProducerIDResponse) {
	resp.ErrorCode = r.txnCallCode("InitProducerId", *req.TransactionalID, req.Version, initFencedSince,
		func(c *txncoord.Coordinator) error {
			res, err := c.InitProducerID(r.ctx(), txncoord.InitRequest{TransactionalID: *req.TransactionalID,
				TimeoutMs: req.TransactionTimeoutMillis, ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch})
			if err == nil {
				resp.ProducerID, resp.ProducerEpoch = res.ProducerID, res.ProducerEpoch
			}
			return err
		})
}
