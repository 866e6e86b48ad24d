package protocol

// InitProducerId v0–v5 for idempotent producers: every call gets a fresh
// producer id at epoch 0, as Kafka does for producers without a
// transactional id (a KIP-360 epoch bump request is answered the same way).
// Ids come from metadata in blocks, so a restart never reuses one.
// Transactions are not supported yet: a transactional id is refused with
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED, which clients treat as fatal.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.InitProducerID, 0, 5, handleInitProducerID) }

func handleInitProducerID(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.InitProducerIDRequest)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID != nil {
		r.s.lg.Info("refused transactional producer: transactions are not supported",
			"remote", r.c.remote, "transactional_id", *req.TransactionalID)
		resp.ErrorCode = r.code(kerr.TransactionalIDAuthorizationFailed.Code)
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
