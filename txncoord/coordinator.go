package txncoord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sediment-io/sediment/metadata"
)

// Defaults of the Config durations (Kafka's).
const (
	DefaultMaxTimeout          = 15 * time.Minute
	DefaultIDExpiration        = 7 * 24 * time.Hour
	DefaultAbortSweepInterval  = 10 * time.Second
	DefaultExpireSweepInterval = time.Hour
)

// writeTimeout bounds one metadata transaction. A write is never cut
// short by its request's context: many requests share it.
const writeTimeout = 30 * time.Second

// Coordinator coordinates the transactions of the shards it owns (every
// shard, on one node).
type Coordinator struct {
	cfg     Config
	lg      *slog.Logger
	m       *metrics
	persist *persister
	closed  atomic.Bool

	// mu guards shards and loading. Lock order: a txn's mu, then its
	// shard's mu, then mu.
	mu      sync.Mutex
	shards  [Shards]*shard // nil: not owned here
	loading [Shards]bool   // AcquireShard is loading the shard

	stopSweeps context.CancelFunc
	sweepsDone chan struct{}
}

// Open starts a coordinator. On one node (no Fencer) it claims every
// shard in metadata (fencing out any earlier coordinator), raises their
// coordinator epochs, loads every record and resumes every Prepare*
// transaction. In a cluster it owns no shard until AcquireShard. It
// starts the timeout and expiration sweeps; Close stops them.
func Open(ctx context.Context, cfg Config) (*Coordinator, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	c := &Coordinator{cfg: cfg, lg: cfg.Logger, sweepsDone: make(chan struct{})}
	c.m = newMetrics(c)
	c.persist = newPersister(c)
	if cfg.Fencer == nil {
		if err := c.claimAll(ctx); err != nil {
			c.closeShards()
			c.persist.close()
			return nil, err
		}
	} else {
		c.lg.Info("transaction coordinator ready: it serves the coordinator shards the cluster gives it", "shards", Shards)
	}
	c.m.register(cfg.Registry)
	sweepCtx, cancel := context.WithCancel(context.Background())
	c.stopSweeps = cancel
	go pprof.Do(sweepCtx, pprof.Labels("sediment", "txncoord-sweeps"), func(ctx context.Context) {
		defer close(c.sweepsDone)
		c.runSweeps(ctx)
	})
	return c, nil
}

// setDefaults fills the unset options and rejects nonsense.
func (cfg *Config) setDefaults() error {
	if cfg.Meta == nil || cfg.ProducerIDs == nil || cfg.Markers == nil {
		return errors.New("txncoord: Config needs Meta, ProducerIDs and Markers")
	}
	for _, d := range []struct {
		v    *time.Duration
		def  time.Duration
		name string
	}{
		{&cfg.MaxTimeout, DefaultMaxTimeout, "transaction.max.timeout.ms"},
		{&cfg.IDExpiration, DefaultIDExpiration, "transactional.id.expiration.ms"},
		{&cfg.AbortSweepInterval, DefaultAbortSweepInterval, "transaction.abort.timed.out.transaction.cleanup.interval.ms"},
		{&cfg.ExpireSweepInterval, DefaultExpireSweepInterval, "transaction.remove.expired.transaction.cleanup.interval.ms"},
	} {
		if *d.v < 0 {
			return fmt.Errorf("txncoord: %s is negative (%v)", d.name, *d.v)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return nil
}

// claimAll makes a one-node coordinator the owner of every shard under
// one claim and loads every record.
func (c *Coordinator) claimAll(ctx context.Context) error {
	fence, err := c.cfg.Meta.ClaimTxns(ctx, 0)
	if err != nil {
		return fmt.Errorf("txncoord: claim transactions: %w", err)
	}
	all := make([]int32, Shards)
	for i := range all {
		all[i] = int32(i)
	}
	epochs, err := c.cfg.Meta.RaiseTxnCoordinatorEpochs(ctx, fence, all)
	if err != nil {
		return fmt.Errorf("txncoord: raise coordinator epochs: %w", err)
	}
	stored, err := c.cfg.Meta.LoadTxns(ctx)
	if err != nil {
		return fmt.Errorf("txncoord: load transactions: %w", err)
	}
	byShard := make([][]metadata.StoredTxn, Shards)
	for _, st := range stored {
		byShard[ShardOf(st.ID)] = append(byShard[ShardOf(st.ID)], st)
	}
	for i := range all {
		sh, err := c.newShard(int32(i), fence, epochs[i], byShard[i])
		if err != nil {
			return err
		}
		c.publish(sh)
	}
	c.lg.Info("transaction coordinator ready", "transactional_ids", len(stored), "fence", fence.Version)
	return nil
}

// Close stops the sweeps and every shard's marker writers, and waits for
// the writes in flight. Transactions in Prepare* stay so in metadata: the
// next owner of their shard completes them. Later calls answer
// NOT_COORDINATOR.
func (c *Coordinator) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.stopSweeps()
	<-c.sweepsDone
	c.closeShards()
	c.persist.close()
	return nil
}

// closeShards forgets every shard, waiting for its goroutines.
func (c *Coordinator) closeShards() {
	for i := range Shards {
		c.mu.Lock()
		sh := c.shards[i]
		c.mu.Unlock()
		if sh != nil {
			sh.stop(false)
			sh.wg.Wait()
			c.unpublish(sh)
		}
	}
}

// now is the coordinator's clock in Unix milliseconds.
func (c *Coordinator) now() int64 { return c.cfg.Now().UnixMilli() }

// hook calls the test seam, if any.
func (c *Coordinator) hook(phase string) {
	if c.cfg.Hook != nil {
		c.cfg.Hook(phase)
	}
}

// errNotCoordinator is kerr.NotCoordinator with the reason.
func errNotCoordinator(why string, args ...any) error {
	return fmt.Errorf("txncoord: %s: %w", fmt.Sprintf(why, args...), kerr.NotCoordinator)
}
