package groupcoord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/pprof"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment-io/sediment/metadata"
)

// Config configures a Coordinator.
type Config struct {
	// Meta stores groups and offsets.
	Meta *metadata.Store
	// Cluster gives the broker configs and the live topics.
	Cluster Cluster
	// NodeID is recorded in the one-node coordinator's claim.
	NodeID int32
	// Fence, set in a cluster, gives each shard's fence: the coordinator
	// then owns no shard until AcquireShard. Nil: one node, which claims
	// every group at Open.
	Fence Fencer
	// Clock defaults to the wall clock; tests inject their own.
	Clock Clock
	// Logger receives one structured line per join, leave, expiry and
	// completed rebalance (default slog.Default()).
	Logger *slog.Logger
	// Registry receives the coordinator's metrics (nil: not registered).
	Registry prometheus.Registerer
}

// Coordinator coordinates the consumer groups of the shards it owns (every
// shard, on one node).
type Coordinator struct {
	meta    *metadata.Store
	fencer  Fencer
	cluster Cluster
	clock   Clock
	lg      *slog.Logger
	m       *metrics
	persist *persister
	closed  atomic.Bool

	// mu guards groups and shards. Lock order: a group's mu may be held
	// while taking mu (forget), never the reverse.
	mu     sync.Mutex
	groups map[string]*group
	shards [Shards]*shardOwner // nil: not owned here

	stopJanitor context.CancelFunc
	janitorDone chan struct{}
}

// Open moves group keys written before shards under their shard (once),
// then, on one node, claims the groups in metadata (fencing any earlier
// coordinator) and loads them with their offsets; in a cluster it owns no
// shard until AcquireShard. It starts the persister and the cleanup loop;
// Close stops them.
func Open(ctx context.Context, cfg Config) (*Coordinator, error) {
	if cfg.Meta == nil || cfg.Cluster == nil {
		return nil, errors.New("groupcoord: Config needs Meta and Cluster")
	}
	if cfg.Clock == nil {
		cfg.Clock = realClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	moved, err := cfg.Meta.MigrateGroupKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("groupcoord: %w", err)
	}
	if moved > 0 {
		cfg.Logger.Info("group keys moved under their coordinator shard", "keys", moved)
	}
	c := &Coordinator{meta: cfg.Meta, fencer: cfg.Fence, cluster: cfg.Cluster, clock: cfg.Clock, lg: cfg.Logger,
		groups: map[string]*group{}, janitorDone: make(chan struct{})}
	c.m = newMetrics(c)
	c.persist = newPersister(c)
	if cfg.Fence == nil {
		if err := c.claimAll(ctx, cfg.NodeID); err != nil {
			c.persist.close()
			return nil, err
		}
	} else {
		c.lg.Info("group coordinator ready: it serves the coordinator shards the cluster gives it", "shards", Shards)
	}
	c.m.register(cfg.Registry) // last: an Open that failed registered nothing
	janitorCtx, cancel := context.WithCancel(context.Background())
	c.stopJanitor = cancel
	go pprof.Do(janitorCtx, pprof.Labels("sediment", "groupcoord-janitor"), func(ctx context.Context) {
		defer close(c.janitorDone)
		c.runJanitor(ctx)
	})
	return c, nil
}

// claimAll makes a one-node coordinator the owner of every shard under
// one claim, and loads every group.
func (c *Coordinator) claimAll(ctx context.Context, node int32) error {
	fences, err := c.meta.ClaimGroups(ctx, node)
	if err != nil {
		return fmt.Errorf("groupcoord: claim groups: %w", err)
	}
	stored, err := c.meta.LoadGroups(ctx)
	if err != nil {
		return fmt.Errorf("groupcoord: load groups: %w", err)
	}
	byShard := make([][]metadata.StoredGroup, Shards)
	for _, sg := range stored {
		byShard[ShardOf(sg.ID)] = append(byShard[ShardOf(sg.ID)], sg)
	}
	for shard, groups := range byShard {
		if err := c.publish(newShardOwner(int32(shard), fences[0]), groups); err != nil {
			return err
		}
	}
	c.lg.Info("group coordinator ready", "groups", len(stored), "fence", fences[0].Version)
	return nil
}

// Close stops the coordinator: pending writes are made durable (and their
// waiters answered), then every waiting JoinGroup and SyncGroup is answered
// with NOT_COORDINATOR and all timers stop. Later calls fail with
// ErrNotCoordinator.
func (c *Coordinator) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.stopJanitor()
	<-c.janitorDone
	err := c.persist.close()
	for _, g := range c.allGroups() {
		g.mu.Lock()
		g.shutdownLocked()
		g.mu.Unlock()
	}
	return err
}

// lookup returns the group with id, nil when there is none;
// ErrNotCoordinator when its shard is not served here.
func (c *Coordinator) lookup(id string) (*group, error) {
	if _, err := c.ownerOf(id); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.groups[id], nil
}

// getOrCreate returns the group with id, creating it Empty when absent;
// ErrNotCoordinator when its shard is not served here.
func (c *Coordinator) getOrCreate(id string) (*group, error) {
	o, err := c.ownerOf(id)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shards[o.shard] != o {
		return nil, ErrNotCoordinator // dropped meanwhile
	}
	g := c.groups[id]
	if g == nil {
		g = newGroup(c, o, id)
		c.groups[id] = g
	}
	return g, nil
}

// forget drops g from the groups (it was deleted) unless a newer group of
// the same id replaced it already.
func (c *Coordinator) forget(g *group) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.groups[g.id] == g {
		delete(c.groups, g.id)
	}
}

// allGroups returns every group, sorted by id.
func (c *Coordinator) allGroups() []*group {
	c.mu.Lock()
	out := make([]*group, 0, len(c.groups))
	for _, g := range c.groups {
		out = append(out, g)
	}
	c.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}
