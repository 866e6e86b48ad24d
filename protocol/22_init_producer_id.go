package protocol

// InitProducerId v0–v5 for idempotent producers: every call gets a fresh
// producer id at epoch 0, as Kafka does for producers without a
// transactional id (a KIP-360 epoch bump request is answered the same way).
// Ids come from metadata in blocks, so a restart never reuses one.
// Transactions are not supported yet: a transactional id is refused with
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED, which clients treat as fatal.

import (
	"context"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/metadata"
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
	id, err := r.s.pids.next(r.ctx())
	if err != nil {
		r.s.lg.Warn("producer id allocation failed", "err", err)
		resp.ErrorCode = r.code(kerr.CoordinatorNotAvailable.Code) // retriable
		return resp, nil
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return resp, nil
}

// producerIDBlock is how many ids one metadata update reserves.
const producerIDBlock = 1000

// producerIDs hands out producer ids from blocks reserved in metadata.
type producerIDs struct {
	meta *metadata.Store

	mu     sync.Mutex // guards nextID and end
	nextID int64
	end    int64
}

func (p *producerIDs) next(ctx context.Context) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.nextID >= p.end {
		first, err := p.meta.AllocateProducerIDs(ctx, producerIDBlock)
		if err != nil {
			return 0, fmt.Errorf("protocol: reserve producer ids: %w", err)
		}
		p.nextID, p.end = first, first+producerIDBlock
	}
	id := p.nextID
	p.nextID++
	return id, nil
}
