package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sediment-io/sediment/metadata"
)

// DefaultSessionTimeout is the session lease's TTL when Config leaves it
// zero (--session-timeout).
const DefaultSessionTimeout = 10 * time.Second

// Shards is the number of group-coordinator shards; it must equal
// groupcoord.Shards (this package does not import the coordinator).
const Shards = 64

// Config configures a Node.
type Config struct {
	Client *clientv3.Client // etcdkv.KV.Client()
	Prefix string           // etcdkv.KV.Prefix(): every key lives under it
	Meta   *metadata.Store  // on the same etcd and prefix

	NodeID int32  // --node-id, unique in the cluster
	Host   string // advertised host
	Port   int32  // advertised port
	Rack   string // --rack, optional
	// Durability is "object" (the default) or "wal": a wal-mode broker's
	// partitions wait for it to come back, because its WAL holds
	// acknowledged records not yet in the bucket.
	Durability string
	// SessionTimeout is the lease TTL (default DefaultSessionTimeout;
	// etcd counts whole seconds and grants at least about 2 s): how long
	// after a broker's last keep-alive its partitions may move.
	SessionTimeout time.Duration

	Partitions Owner // the partition log
	// Shards is the group coordinator. nil: this node owns no shard, and
	// the shards the controller places on it stay without an owner, so
	// every broker of a real cluster has one.
	Shards ShardOwner
	// Tables is the table converter. nil: this node converts no table,
	// and the table slots the controller places on it stay without an
	// owner.
	Tables TableOwner
	// IsTable says, from a topic's configs, whether it is a table topic:
	// the controller places a table slot for each. nil: none.
	IsTable  func(configs map[string]string) bool
	Logger   *slog.Logger
	Registry prometheus.Registerer // nil: no metrics
}

// Owner is the partition log as the cluster drives it (partition.Log).
type Owner interface {
	// Acquire starts serving a partition as its owner, right after its
	// own key was written.
	Acquire(ctx context.Context, id metadata.TopicID, p int32) error
	// Kept describes the acknowledged batches of a partition not owned
	// here that the log kept from an earlier ownership (wal durability),
	// for the acquisition to decide whether they continue the log.
	Kept(id metadata.TopicID, p int32) metadata.KeptBatches
	// DropSuperseded drops the kept batches of partitions not owned here
	// that no longer continue their log (another owner committed past
	// them, or a takeover fenced them), so they hold the WAL no more.
	DropSuperseded(ctx context.Context) error
	// Release hands a partition over: refuse new appends, commit what
	// was taken, stop serving it. An error (or ctx ending) leaves it to
	// Drop.
	Release(ctx context.Context, id metadata.TopicID, p int32) error
	// Drop stops serving a partition at once: the ownership is lost.
	Drop(id metadata.TopicID, p int32)
	// SyncTopics re-reads the topics from metadata.
	SyncTopics(ctx context.Context) error
}

// ShardOwner is the group coordinator as the cluster drives it.
type ShardOwner interface {
	AcquireShard(ctx context.Context, shard int32) error
	ReleaseShard(ctx context.Context, shard int32) error
	DropShard(shard int32)
}

// Broker is a live broker as clients see it.
type Broker struct {
	NodeID int32
	Host   string
	Port   int32
	Rack   string
}

func (c *Config) validate() error {
	var errs []error
	if c.Client == nil || c.Meta == nil {
		errs = append(errs, errors.New("cluster mode needs --metadata etcd://"))
	}
	if c.Partitions == nil {
		errs = append(errs, errors.New("no partition log to own partitions"))
	}
	if c.NodeID < 0 {
		errs = append(errs, fmt.Errorf("--node-id %d: must be 0 or more", c.NodeID))
	}
	switch c.Durability {
	case "":
		c.Durability = "object"
	case "object", "wal":
	default:
		errs = append(errs, fmt.Errorf("--durability %q: want object or wal", c.Durability))
	}
	if c.SessionTimeout == 0 {
		c.SessionTimeout = DefaultSessionTimeout
	}
	if c.SessionTimeout < time.Second {
		errs = append(errs, fmt.Errorf("--session-timeout %v: etcd leases count whole seconds, want 1s or more", c.SessionTimeout))
	}
	if c.Prefix != "" && !strings.HasSuffix(c.Prefix, "/") {
		c.Prefix += "/"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	return nil
}
