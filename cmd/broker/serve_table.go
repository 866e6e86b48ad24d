package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	icebergcatalog "github.com/apache/iceberg-go/catalog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/table"
	"github.com/sediment-io/sediment/table/catalog"
)

// tableConverter is the table topics' converter and the catalog it commits
// to. A catalog that cannot be reached when the broker starts does not stop
// the broker: table topics wait (their status says why) while it is tried
// again in the background, and Kafka is served all along.
type tableConverter struct {
	cancel context.CancelFunc
	done   chan struct{}
	// tableID returns the id of a table topic; ok is false for any other.
	tableID func(topic string) (metadata.TopicID, bool)
	// cluster, in a cluster, finds and asks the broker converting a table
	// for its status; nil on one node.
	cluster *tableCluster

	mu      sync.Mutex // guards the fields below
	cat     icebergcatalog.Catalog
	conv    *table.Converter
	waitErr error // why the catalog is not open yet
	// owned are the table slots the cluster gave this broker, handed to
	// the converter once it starts (the catalog may open late).
	owned map[metadata.TopicID]bool
}

// catalogRetry is the pause between attempts to open an unreachable
// --table-catalog.
var catalogRetry = 5 * time.Second

// startTables opens the --table-catalog and starts the converter of table
// topics. Only a --table-catalog value that can never work fails start-up.
func (b *broker) startTables(ctx context.Context, cfg *serveConfig, logger *slog.Logger, reg *prometheus.Registry) error {
	open := func(ctx context.Context) (icebergcatalog.Catalog, error) {
		return catalog.Open(ctx, cfg.TableCatalog, catalog.Options{DataDir: cfg.DataDir, ObjectStoreURL: cfg.ObjectStore})
	}
	opts := table.Options{Log: b.log, Logger: logger, Registry: reg,
		OrphanGrace: cfg.TableOrphans, BeforeCommit: crashBeforeTableCommit()}
	var tc *tableCluster
	if b.etcd != nil {
		tc = &tableCluster{self: int32(cfg.NodeID), node: &b.late,
			peers: newTablePeers(b.late.brokerAddrs, fmt.Sprintf("sediment-broker-%d-tables", cfg.NodeID))}
		opts.Cluster, opts.Read, opts.DeadLetter = &b.late, b.log.ReadReplicaCommitted, tc.peers.deadLetter
	}
	start := func(cat icebergcatalog.Catalog) *table.Converter {
		o := opts
		o.Catalog = cat
		return table.Start(o)
	}
	rctx, stop := context.WithCancel(context.Background())
	t := &tableConverter{cancel: stop, done: make(chan struct{}), owned: map[metadata.TopicID]bool{}, cluster: tc,
		tableID: func(name string) (metadata.TopicID, bool) {
			tp, ok := b.log.Topic(name)
			if !ok || !table.ConfigOf(tp.Configs()).Enable {
				return metadata.TopicID{}, false
			}
			return tp.ID, true
		}}
	if b.etcd != nil {
		shared, err := sharedTableCatalog(cfg)
		if err != nil {
			stop()
			return err
		}
		if !shared {
			logger.Warn("table topics are not converted: a cluster needs a --table-catalog every broker shares")
			t.waitErr = errNoSharedCatalog
			close(t.done)
			b.tables = t
			return nil
		}
	}
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	cat, err := open(octx)
	cancel()
	if errors.Is(err, catalog.ErrBadURL) {
		stop()
		return err
	}
	b.tables = t
	if err == nil {
		t.cat, t.conv = cat, start(cat)
		close(t.done)
		return nil
	}
	logger.Warn("table catalog unreachable: table topics wait for it, Kafka is served meanwhile", "err", err, "retry", catalogRetry)
	t.waitErr = err
	go pprof.Do(rctx, pprof.Labels("sediment", "table-catalog-open"), func(ctx context.Context) {
		defer close(t.done)
		t.openLater(ctx, open, start, logger)
	})
	return nil
}

// openLater tries the catalog every catalogRetry until it opens, then
// starts the converter.
func (t *tableConverter) openLater(ctx context.Context, open func(context.Context) (icebergcatalog.Catalog, error),
	start func(icebergcatalog.Catalog) *table.Converter, logger *slog.Logger) {
	tick := time.NewTicker(catalogRetry)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		octx, cancel := context.WithTimeout(ctx, 30*time.Second)
		cat, err := open(octx)
		cancel()
		t.mu.Lock()
		if err != nil || ctx.Err() != nil {
			if err != nil { // canceled after a good open: keep the last reason
				t.waitErr = err
			}
			t.mu.Unlock()
			if cat != nil {
				closeCatalog(cat)
			}
			continue
		}
		t.cat, t.conv, t.waitErr = cat, start(cat), nil
		for id := range t.owned { // acquired while the catalog was down
			t.conv.AcquireTable(ctx, id) //nolint:errcheck // never fails
		}
		t.mu.Unlock()
		logger.Info("table catalog open: table topics are converted")
		return
	}
}

// errNoSharedCatalog: a cluster broker without a --table-catalog converts
// no table (the embedded catalog is a file of this broker's alone).
var errNoSharedCatalog = errors.New("a cluster converts table topics only with a --table-catalog every broker shares: postgres:// or rest+http(s)://")

// sharedTableCatalog says, for a cluster broker, whether its
// --table-catalog is shared by every broker: postgres and REST catalogs
// are; the embedded SQLite catalog (the default) is not, so table topics
// wait; a SQLite file is only with --shared-local-store (every broker on
// this machine, tests and demos), and is refused otherwise.
func sharedTableCatalog(cfg *serveConfig) (bool, error) {
	switch c := cfg.TableCatalog; {
	case c == "":
		return false, nil
	case c == "sqlite":
		return false, fmt.Errorf("--table-catalog sqlite with --metadata etcd: the embedded catalog lives in this broker's --data-dir, and every broker of a cluster must commit to the same catalog; use postgres:// or rest+http(s)://")
	case strings.HasPrefix(c, "sqlite:") && !cfg.SharedLocal:
		return false, fmt.Errorf("--table-catalog %s with --metadata etcd: a SQLite file is not shared between machines, and every broker of a cluster must commit to the same catalog; use postgres:// or rest+http(s):// (or --shared-local-store when every broker runs on this machine)", c)
	}
	return true, nil
}

// AcquireTable, ReleaseTable and DropTable hand the cluster's table slots
// to the converter (cluster.TableOwner), or keep them until it starts.
func (t *tableConverter) AcquireTable(ctx context.Context, id metadata.TopicID) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.owned[id] = true
	if t.conv != nil {
		return t.conv.AcquireTable(ctx, id)
	}
	return nil
}

func (t *tableConverter) ReleaseTable(ctx context.Context, id metadata.TopicID) error {
	conv := t.disown(id)
	if conv == nil {
		return nil
	}
	return conv.ReleaseTable(ctx, id)
}

func (t *tableConverter) DropTable(id metadata.TopicID) {
	if conv := t.disown(id); conv != nil {
		conv.DropTable(id)
	}
}

func (t *tableConverter) disown(id metadata.TopicID) *table.Converter {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.owned, id)
	return t.conv
}

// statusEntries are a table topic's sediment.table.status.* entries
// (protocol.Config.TableStatus): in a cluster, those of the broker that
// converts the table.
func (t *tableConverter) statusEntries(topic string, names []string) [][2]string {
	if t.cluster == nil {
		return t.localStatus(topic)
	}
	if id, ok := t.tableID(topic); ok {
		return t.clusterStatus(topic, id, names)
	}
	return nil
}

// localStatus is the status of topic's table as this broker sees it; while
// the catalog is not open, a state saying so.
func (t *tableConverter) localStatus(topic string) [][2]string {
	t.mu.Lock()
	conv, waitErr := t.conv, t.waitErr
	t.mu.Unlock()
	if conv != nil {
		return conv.StatusEntries(topic)
	}
	if _, ok := t.tableID(topic); !ok {
		return nil
	}
	return [][2]string{{"sediment.table.status.state", "waiting for the table catalog: " + waitErr.Error()}}
}

func (t *tableConverter) close() error {
	t.cancel()
	<-t.done
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cluster != nil { // after the workers, which append dead letters through it
		defer t.cluster.peers.close()
	}
	if t.conv == nil {
		return nil
	}
	err := t.conv.Close()
	if c, ok := t.cat.(io.Closer); ok {
		err = errors.Join(err, c.Close())
	}
	return err
}

// closeCatalog closes a catalog that will not be used.
func closeCatalog(cat icebergcatalog.Catalog) {
	if c, ok := cat.(io.Closer); ok {
		c.Close()
	}
}

// crashBeforeTableCommit is a fault-injection seam for crash tests: with
// SEDIMENT_TEST_CRASH_BEFORE_TABLE_COMMIT=N the process kills itself with
// SIGKILL after the N-th table commit's Parquet files are written, before
// the catalog commit.
func crashBeforeTableCommit() func(string) {
	n, err := strconv.Atoi(os.Getenv("SEDIMENT_TEST_CRASH_BEFORE_TABLE_COMMIT"))
	if err != nil || n <= 0 {
		return nil
	}
	var commits atomic.Int64
	return func(tbl string) {
		if commits.Add(1) == int64(n) {
			slog.Warn("SEDIMENT_TEST_CRASH_BEFORE_TABLE_COMMIT: killing the process between the Parquet write and the catalog commit", "table", tbl)
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
}
