package txncoord

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment-io/sediment/metadata"
)

// Shards is the number of coordinator shards transactional ids are spread
// over: the group coordinator's.
const Shards = metadata.GroupShards

// ShardOf returns the coordinator shard of a transactional id: the shard
// a group of the same name has (metadata.GroupShard), so the same owner
// and fence serve both.
func ShardOf(transactionalID string) int32 { return metadata.GroupShard(transactionalID) }

// TopicPartition names one partition of a transaction.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// GroupPartition returns the partition that stands for a group's offsets
// in a transaction, as in Kafka: partition ShardOf(group) of
// "__consumer_offsets". A transaction that added the group with
// AddOffsets includes it (Verify), and DescribeTransactions lists it.
func GroupPartition(group string) TopicPartition {
	return TopicPartition{Topic: offsetsTopic, Partition: ShardOf(group)}
}

// Markers is how the coordinator reaches partition owners and group
// coordinators.
type Markers interface {
	// WriteMarkers makes the marker durable in every partition of m and
	// completes m's pending offsets in every group of m. The coordinator
	// retries it (with backoff) until it returns nil or the shard is
	// lost, so it must be idempotent.
	WriteMarkers(ctx context.Context, m MarkerRequest) error
}

// MarkerRequest is one transaction's outcome to write into its partitions
// and groups.
type MarkerRequest struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	Commit          bool
	// CoordinatorEpoch is the shard's coordinator epoch: partitions
	// refuse a marker older than one they saw (a stale coordinator).
	CoordinatorEpoch int32
	Partitions       []TopicPartition
	Groups           []string
}

// Fencer gives the fences of the shards this broker owns in a cluster
// (groupcoord.Fencer has the same method).
type Fencer interface {
	// ShardFence returns the condition that holds only while this broker
	// owns the shard; ok is false when it does not own it now.
	ShardFence(shard int32) (metadata.Cond, bool)
}

// ProducerIDs allocates producer ids.
type ProducerIDs interface {
	// Next returns a producer id never handed out before.
	Next(ctx context.Context) (int64, error)
}

// Config configures a Coordinator.
type Config struct {
	// Meta stores the transactional ids' records and the shards'
	// coordinator epochs.
	Meta *metadata.Store
	// Fencer, set in a cluster, gives each shard's fence: the coordinator
	// then owns no shard until AcquireShard. Nil: one node, which owns
	// every shard from Open.
	Fencer Fencer
	// ProducerIDs allocates the producer ids of new transactional ids.
	ProducerIDs ProducerIDs
	// Markers writes transaction markers.
	Markers Markers
	// Topics gives a topic's partition count (ok false: no such topic),
	// to validate AddPartitions.
	Topics func(topic string) (partitions int32, ok bool)
	// Now defaults to time.Now; tests inject their own clock.
	Now func() time.Time
	// MaxTimeout caps a producer's transaction.timeout.ms
	// (transaction.max.timeout.ms, default 15 minutes).
	MaxTimeout time.Duration
	// IDExpiration is how long an idle transactional id is kept
	// (transactional.id.expiration.ms, default 7 days).
	IDExpiration time.Duration
	// AbortSweepInterval is how often timed-out transactions are looked
	// for (transaction.abort.timed.out.transaction.cleanup.interval.ms,
	// default 10 seconds).
	AbortSweepInterval time.Duration
	// ExpireSweepInterval is how often expired ids are looked for
	// (transaction.remove.expired.transaction.cleanup.interval.ms,
	// default 1 hour).
	ExpireSweepInterval time.Duration
	// Hook, when set, is called at named points after a durable write:
	// "after-add-partitions", "after-prepare-commit",
	// "after-prepare-abort", "after-complete". A test seam (crash tests);
	// nil in production.
	Hook func(phase string)
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Registry receives the coordinator's metrics (nil: not registered).
	Registry prometheus.Registerer
}

// InitRequest is an InitProducerId with a transactional id. ProducerID and
// ProducerEpoch are -1 unless the producer retries with the ones it has
// (KIP-360).
type InitRequest struct {
	TransactionalID string
	TimeoutMs       int32
	ProducerID      int64
	ProducerEpoch   int16
}

// InitResult is the producer id and epoch InitProducerID gives.
type InitResult struct {
	ProducerID    int64
	ProducerEpoch int16
}

// AddPartitionsRequest adds partitions to a producer's transaction (or,
// with VerifyOnly, checks that they are in it: KIP-890 part 1).
type AddPartitionsRequest struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	Partitions      []TopicPartition
	VerifyOnly      bool
}

// Description is one transactional id as DescribeTransactions shows it.
// Err is kerr.TransactionalIDNotFound or kerr.NotCoordinator when the id
// cannot be described here.
type Description struct {
	TransactionalID string
	Err             error
	State           State
	ProducerID      int64
	ProducerEpoch   int16
	TimeoutMs       int32
	StartTimeMs     int64 // -1: no transaction open
	Partitions      []TopicPartition
}

// ListFilter selects the transactions ListTransactions returns: empty
// slices and MinDurationMs <= 0 select all.
type ListFilter struct {
	States        []State
	ProducerIDs   []int64
	MinDurationMs int64
}

// Listing is one transactional id as ListTransactions shows it.
type Listing struct {
	TransactionalID string
	ProducerID      int64
	State           State
}
