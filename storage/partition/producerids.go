package partition

import (
	"context"
	"fmt"
	"sync"

	"github.com/sediment-io/sediment/metadata"
)

// producerIDBlock is how many ids one metadata update reserves.
const producerIDBlock = 1000

// ProducerIDs hands out the ids of idempotent producers (InitProducerId)
// from blocks reserved in metadata, so a restart never reuses one. It is
// safe for concurrent use.
type ProducerIDs struct {
	meta *metadata.Store

	mu     sync.Mutex // guards nextID and end
	nextID int64
	end    int64
}

// NewProducerIDs returns an allocator reserving its blocks in meta.
func NewProducerIDs(meta *metadata.Store) *ProducerIDs { return &ProducerIDs{meta: meta} }

// Next returns a producer id never handed out before.
func (p *ProducerIDs) Next(ctx context.Context) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.nextID >= p.end {
		first, err := p.meta.AllocateProducerIDs(ctx, producerIDBlock)
		if err != nil {
			return 0, fmt.Errorf("partition: reserve producer ids: %w", err)
		}
		p.nextID, p.end = first, first+producerIDBlock
	}
	id := p.nextID
	p.nextID++
	return id, nil
}
