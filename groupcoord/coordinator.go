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
	// NodeID is recorded in the coordinator's fence.
	NodeID int32
	// Clock defaults to the wall clock; tests inject their own.
	Clock Clock
	// Logger receives one structured line per join, leave, expiry and
	// completed rebalance (default slog.Default()).
	Logger *slog.Logger
	// Registry receives the coordinator's metrics (nil: not registered).
	Registry prometheus.Registerer
}

// Coordinator coordinates every consumer group of the broker.
type Coordinator struct {
	meta    *metadata.Store
	cluster Cluster
	clock   Clock
	lg      *slog.Logger
	m       *metrics
	persist *persister
	closed  atomic.Bool

	// mu guards groups. Lock order: a group's mu may be held while taking
	// mu (forget), never the reverse.
	mu     sync.Mutex
	groups map[string]*group

	stopJanitor context.CancelFunc
	janitorDone chan struct{}
}

// Open claims the groups in metadata (fencing any earlier coordinator),
// loads them with their offsets, and starts the persister and the cleanup
// loop. Close stops them.
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
	fence, err := cfg.Meta.ClaimGroups(ctx, cfg.NodeID)
	if err != nil {
		return nil, fmt.Errorf("groupcoord: claim groups: %w", err)
	}
	stored, err := cfg.Meta.LoadGroups(ctx)
	if err != nil {
		return nil, fmt.Errorf("groupcoord: load groups: %w", err)
	}
	c := &Coordinator{meta: cfg.Meta, cluster: cfg.Cluster, clock: cfg.Clock, lg: cfg.Logger,
		groups: make(map[string]*group, len(stored)), janitorDone: make(chan struct{})}
	c.m = newMetrics(c, cfg.Registry)
	versions := make(map[string]int64, len(stored))
	for _, sg := range stored {
		g := loadGroup(c, sg)
		c.groups[g.id] = g
		versions[g.id] = sg.Version
	}
	c.persist = newPersister(c, fence, versions)
	janitorCtx, cancel := context.WithCancel(context.Background())
	c.stopJanitor = cancel
	go pprof.Do(janitorCtx, pprof.Labels("sediment", "groupcoord-janitor"), func(ctx context.Context) {
		defer close(c.janitorDone)
		c.runJanitor(ctx)
	})
	c.lg.Info("group coordinator ready", "groups", len(stored), "fence", fence)
	return c, nil
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

// lookup returns the group with id, nil when there is none.
func (c *Coordinator) lookup(id string) *group {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.groups[id]
}

// getOrCreate returns the group with id, creating it Empty when absent.
func (c *Coordinator) getOrCreate(id string) *group {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[id]
	if g == nil {
		g = newGroup(c, id)
		c.groups[id] = g
	}
	return g
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
