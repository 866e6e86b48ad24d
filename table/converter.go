package table

import (
	"context"
	"log/slog"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	icebergcatalog "github.com/apache/iceberg-go/catalog"
	itable "github.com/apache/iceberg-go/table"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/partition"
	"github.com/sediment-io/sediment/storage/record"
)

// Namespace holds every table topic's table (table name = topic name).
const Namespace = "sediment"

// Options configure a Converter.
type Options struct {
	Log     *partition.Log
	Catalog icebergcatalog.Catalog
	Logger  *slog.Logger
	// Registry receives the per-table metrics (nil: not registered).
	Registry prometheus.Registerer
	// PollInterval is how often topic configs are checked for tables to
	// start, restart or stop (default 1s).
	PollInterval time.Duration
	// RetryInterval is the pause after a failure (catalog or store down)
	// before the table is reopened (default 5s).
	RetryInterval time.Duration
	// OrphanGrace: unreferenced files under a table's location older than
	// this are deleted when its converter starts (default 1h; negative:
	// never).
	OrphanGrace time.Duration
	// BeforeCommit, when set, runs after a commit's Parquet files are
	// written and before the catalog commit (a crash-test seam).
	BeforeCommit func(table string)
	// Cluster, when set, says which table topics this broker converts:
	// those whose table slot it holds (AcquireTable), each worker bound to
	// the fence it started under and checking it before every commit.
	// nil: one node, which converts every table topic.
	Cluster Fencer
	// Read reads a partition's records for the converter as a
	// read_committed consumer (nil: Log.ReadCommitted): nothing at or past
	// the last stable offset, which it sets, and the aborted transactions
	// overlapping what it returns. In a cluster the topic's partitions are
	// owned by several brokers, and the Log serves only those owned here:
	// it must read the others from the bucket too (the replica read path).
	Read func(ctx context.Context, p *partition.Partition, offset int64, maxBytes int, first bool) (partition.FetchResult, error)
	// DeadLetter appends r to partition part of the dead-letter topic and
	// returns once it is durable (nil: Log.Append and Log.Wait). In a
	// cluster the dead-letter partition may be owned by another broker,
	// which Log.Append refuses: it must reach the owner, and a retry of an
	// append whose outcome is unknown must not write r twice.
	DeadLetter func(ctx context.Context, topic string, part int32, r record.Record) error
}

// Fencer is the cluster as the converter sees it (cluster.Node).
type Fencer interface {
	// TableFence returns the condition that holds only while this broker
	// holds topic id's table slot; ok is false when it does not hold it,
	// or its session is past its local deadline.
	TableFence(id metadata.TopicID) (metadata.Cond, bool)
}

// Converter turns table topics (sediment.table.enable=true) into Iceberg
// tables. It runs one worker goroutine per table topic, off the produce
// path: workers read through the partition log like a read_committed
// consumer (below the last stable offset, without the records of aborted
// transactions or the transaction markers), and never hold its locks
// across I/O.
type Converter struct {
	opts    Options
	metrics *metrics
	cancel  context.CancelFunc
	done    chan struct{}
	kick    chan struct{} // one slot: wakes the supervisor
	wg      sync.WaitGroup

	mu      sync.Mutex // guards workers, stats and owned
	workers map[string]*running
	stats   map[string]*tableStats
	owned   map[metadata.TopicID]bool // the table slots held here (Options.Cluster)
}

// running is a started worker and how to stop it.
type running struct {
	cfg    Config
	id     metadata.TopicID
	fence  metadata.Cond // the table slot's fence it runs under (a cluster)
	cancel context.CancelFunc
	done   chan struct{}
	// commit holds one token while a commit is in flight: ReleaseTable
	// takes it to stop the worker between two commits.
	commit chan struct{}
}

// Start starts the converter; Close stops it.
func Start(opts Options) *Converter {
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	if opts.RetryInterval <= 0 {
		opts.RetryInterval = 5 * time.Second
	}
	if opts.OrphanGrace == 0 {
		opts.OrphanGrace = time.Hour
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Converter{opts: opts, cancel: cancel, done: make(chan struct{}), kick: make(chan struct{}, 1),
		workers: map[string]*running{}, stats: map[string]*tableStats{}, owned: map[metadata.TopicID]bool{}}
	c.metrics = newMetrics(c, opts.Registry)
	go pprof.Do(ctx, pprof.Labels("sediment", "table-converter"), c.supervise)
	return c
}

// Close stops every worker; what they buffered and did not commit is
// converted again by the next start.
func (c *Converter) Close() error {
	c.cancel()
	<-c.done
	c.wg.Wait() // workers dropped without waiting (DropTable)
	return nil
}

// supervise starts, restarts and stops workers as topic configs change.
func (c *Converter) supervise(ctx context.Context) {
	defer close(c.done)
	defer c.stopAll()
	tick := time.NewTicker(c.opts.PollInterval)
	defer tick.Stop()
	for {
		c.reconcile(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-c.kick:
		}
	}
}

func (c *Converter) reconcile(ctx context.Context) {
	want := map[string]bool{}
	for _, t := range c.opts.Log.Topics() {
		cfg := ConfigOf(t.Configs())
		if !cfg.Enable || c.isDLQ(t.Name) {
			continue
		}
		fence, mine := c.slot(t.ID)
		if !mine {
			continue
		}
		want[t.Name] = true
		c.mu.Lock()
		r, ok := c.workers[t.Name]
		c.mu.Unlock()
		if ok && r.cfg == cfg && r.id == t.ID && r.fence == fence {
			continue
		}
		if ok {
			c.stopWorker(t.Name)
		}
		c.startWorker(ctx, t, cfg, fence)
	}
	c.mu.Lock()
	var gone []string
	for name := range c.workers {
		if !want[name] {
			gone = append(gone, name)
		}
	}
	c.mu.Unlock()
	for _, name := range gone {
		c.stopWorker(name)
	}
}

// isDLQ says whether name is the dead-letter topic of a table topic (it is
// never converted itself, whatever its configs say).
func (c *Converter) isDLQ(name string) bool {
	if !strings.HasSuffix(name, DLQSuffix) {
		return false
	}
	src, ok := c.opts.Log.Topic(strings.TrimSuffix(name, DLQSuffix))
	return ok && ConfigOf(src.Configs()).Enable
}

func (c *Converter) startWorker(ctx context.Context, t *partition.Topic, cfg Config, fence metadata.Cond) {
	wctx, cancel := context.WithCancel(ctx)
	r := &running{cfg: cfg, id: t.ID, fence: fence, cancel: cancel, done: make(chan struct{}), commit: make(chan struct{}, 1)}
	w := &worker{c: c, topic: t, name: t.Name, ident: itable.Identifier{Namespace, t.Name}, cfg: cfg,
		log: c.opts.Logger, stats: c.statsFor(t.Name), fence: fence, commitToken: r.commit}
	c.mu.Lock()
	if c.opts.Cluster != nil && !c.owned[t.ID] { // released since reconcile looked
		c.mu.Unlock()
		cancel()
		return
	}
	c.workers[t.Name] = r
	c.wg.Add(1)
	c.mu.Unlock()
	go pprof.Do(wctx, pprof.Labels("sediment", "table-worker", "table", t.Name), func(ctx context.Context) {
		defer c.wg.Done()
		defer close(r.done)
		w.run(ctx)
	})
}

func (c *Converter) stopWorker(name string) {
	c.mu.Lock()
	r := c.workers[name]
	delete(c.workers, name)
	c.mu.Unlock()
	if r != nil {
		r.cancel()
		<-r.done
		c.statsFor(name).setState("stopped", "")
	}
}

func (c *Converter) stopAll() {
	c.mu.Lock()
	names := make([]string, 0, len(c.workers))
	for n := range c.workers {
		names = append(names, n)
	}
	c.mu.Unlock()
	for _, n := range names {
		c.stopWorker(n)
	}
}
