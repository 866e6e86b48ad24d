package txncoord

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Coordinator coordinates the transactions of the shards it owns (every
// shard, on one node).
type Coordinator struct {
	cfg Config
}

// Open starts a coordinator. On one node (no Fencer) it owns every shard:
// it loads their records and resumes every Prepare* transaction. In a
// cluster it owns no shard until AcquireShard.
func Open(ctx context.Context, cfg Config) (*Coordinator, error) {
	return &Coordinator{cfg: cfg}, nil
}

// Close stops the coordinator's sweeps and marker writers.
func (c *Coordinator) Close() error { return nil }

// AcquireShard starts coordinating a shard whose fence the Fencer gives.
func (c *Coordinator) AcquireShard(ctx context.Context, shard int32) error {
	return kerr.CoordinatorNotAvailable
}

// ReleaseShard hands a shard over.
func (c *Coordinator) ReleaseShard(ctx context.Context, shard int32) error { return nil }

// DropShard forgets a shard at once.
func (c *Coordinator) DropShard(shard int32) {}

// InitProducerID gives a transactional producer its id and epoch.
func (c *Coordinator) InitProducerID(ctx context.Context, req InitRequest) (InitResult, error) {
	return InitResult{}, kerr.CoordinatorNotAvailable
}

// AddPartitions adds partitions to a transaction.
func (c *Coordinator) AddPartitions(ctx context.Context, req AddPartitionsRequest) (map[TopicPartition]error, error) {
	return nil, kerr.CoordinatorNotAvailable
}

// AddOffsets adds a group's offsets to a transaction.
func (c *Coordinator) AddOffsets(ctx context.Context, txnID string, pid int64, epoch int16, group string) error {
	return kerr.CoordinatorNotAvailable
}

// EndTxn commits or aborts a transaction.
func (c *Coordinator) EndTxn(ctx context.Context, txnID string, pid int64, epoch int16, commit bool) error {
	return kerr.CoordinatorNotAvailable
}

// Verify answers a partition leader's KIP-890 part-1 check: nil when
// txnID is Ongoing with (pid, epoch) and tp is in the transaction.
func (c *Coordinator) Verify(ctx context.Context, txnID string, pid int64, epoch int16, tp TopicPartition) error {
	return kerr.CoordinatorNotAvailable
}

// Describe describes transactional ids.
func (c *Coordinator) Describe(ids []string) []Description {
	out := make([]Description, len(ids))
	for i, id := range ids {
		out[i] = Description{TransactionalID: id, Err: kerr.CoordinatorNotAvailable}
	}
	return out
}

// List lists the transactions of the shards owned here.
func (c *Coordinator) List(f ListFilter) []Listing { return nil }
