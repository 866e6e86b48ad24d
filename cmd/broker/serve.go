package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/sediment-io/sediment/cluster"
	"github.com/sediment-io/sediment/config"
	"github.com/sediment-io/sediment/groupcoord"
	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv"
	"github.com/sediment-io/sediment/protocol"
	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/storeurl"
	"github.com/sediment-io/sediment/storage/partition"
	"github.com/sediment-io/sediment/storage/wal"
	"github.com/sediment-io/sediment/txncoord"
)

// serve runs the broker until SIGINT or SIGTERM, then shuts down
// gracefully: stop taking connections, upload what is pending, close. If
// its storage fails, it fails closed (see failClosed) and returns an error.
func serve(cfg *serveConfig) error {
	logger := newLogger(cfg)
	slog.SetDefault(logger)
	setMemoryLimit(cfg, logger)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	b, err := startBroker(ctx, cfg, logger)
	if err != nil {
		return err
	}
	logger.Info("sediment broker ready", "listen", b.ln.Addr().String(), "advertise", cfg.Advertise,
		"data_dir", cfg.DataDir, "object_store", cfg.ObjectStore, "durability", cfg.Durability)
	select {
	case <-ctx.Done():
		logger.Info("shutting down", "reason", context.Cause(ctx))
	case err := <-b.serveErr:
		logger.Error("listener failed", "err", err)
	case <-b.log.Failed():
		return b.failClosed(ctx, cfg.FailedExitDelay)
	case <-b.metaFailed():
		return b.failClosed(ctx, cfg.FailedExitDelay)
	}
	return b.close()
}

// broker is the wired set of components of one running broker.
type broker struct {
	meta      *metadata.Store
	bolt      *metadata.Bolt // meta's backend when it is bbolt, watched for a failed commit
	etcd      *etcdkv.KV     // meta's backend when it is etcd: the broker is a cluster member
	node      *cluster.Node  // the cluster membership, with etcd
	late      lateNode       // node, for the parts that open before it
	groups    *groupcoord.Coordinator
	txns      *txncoord.Coordinator
	markers   *txnMarkers // txns' writer of markers, and its client of the other brokers
	brokerCfg *config.Dynamic
	store     objectstore.Store
	log       *partition.Log
	srv       *protocol.Server
	tables    *tableConverter
	ln        net.Listener
	http      *http.Server
	httpDone  chan struct{} // closed when http.Serve has returned
	ready     atomic.Bool
	opened    atomic.Bool // log and bolt are set: the HTTP probes may look at them
	serveErr  chan error
	logger    *slog.Logger
	// flushTimeout bounds the hand-over of a cluster member's partitions
	// at shutdown (--flush-timeout).
	flushTimeout time.Duration
	stopMaintain context.CancelFunc // ends etcd maintenance, with etcd
}

func startBroker(ctx context.Context, cfg *serveConfig, logger *slog.Logger) (*broker, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("--data-dir %s: %w", cfg.DataDir, err)
	}
	b := &broker{serveErr: make(chan error, 1), logger: logger, flushTimeout: cfg.Timeouts.Flush}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if err := b.startHTTP(cfg, reg); err != nil {
		return nil, err
	}
	if err := b.openStorage(ctx, cfg, logger, reg); err != nil {
		b.close()
		return nil, err
	}
	b.opened.Store(true)
	if err := b.startTables(ctx, cfg, logger, reg); err != nil {
		b.close()
		return nil, err
	}
	if err := b.startKafka(ctx, cfg, logger, reg); err != nil {
		b.close()
		return nil, err
	}
	b.ready.Store(true)
	return b, nil
}

func (b *broker) openStorage(ctx context.Context, cfg *serveConfig, logger *slog.Logger, reg *prometheus.Registry) error {
	kv, err := b.openMetadata(ctx, cfg, logger)
	if err != nil {
		return fmt.Errorf("--metadata: %w", err)
	}
	b.etcd = etcdKV(kv)
	b.meta = metadata.NewStore(metadata.Instrument(kv, reg))
	if b.etcd != nil {
		b.startEtcdMaintenance(cfg, logger, reg)
	}
	// One owner of the dynamic broker configs, shared by the log, the
	// group coordinator and the protocol (through the log).
	b.brokerCfg, err = config.NewDynamic(ctx, b.meta, metadata.IsConflict)
	if err != nil {
		return err
	}
	store, err := storeurl.Open(ctx, cfg.ObjectStore, storeurl.Options{Registerer: reg})
	if err != nil {
		return fmt.Errorf("--object-store: %w", err)
	}
	b.store = store
	durability := partition.DurabilityWAL
	if cfg.Durability == "object" {
		durability = partition.DurabilityObject
	}
	var owners partition.Ownership // nil: one node owns every partition
	if b.etcd != nil {
		owners = &b.late
	}
	b.log, err = partition.Open(ctx, partition.Options{
		Ownership: owners, Meta: b.meta, BrokerConfig: b.brokerCfg, Store: store, WALDir: filepath.Join(cfg.DataDir, "wal"), WALFS: testWALFS,
		WALSegmentBytes: cfg.WALSegmentBytes, Durability: durability,
		UploadInterval: cfg.UploadInterval, UploadBytes: cfg.UploadBytes, UploadConcurrency: cfg.UploadConc,
		MaxObjectPartitions: maxObjectPartitions(cfg), MaxObjectBatches: maxObjectBatches(cfg),
		FlushTimeout: cfg.Timeouts.Flush, BlockLoadTimeout: cfg.Timeouts.BlockLoad,
		StreamStallTimeout: cfg.Timeouts.StreamStall, StreamIdleTimeout: cfg.Timeouts.StreamIdle,
		TailCacheBytes: cfg.TailCacheBytes, BlockCacheBytes: cfg.BlockCacheBytes,
		WALMaxBytes: cfg.WALMaxBytes, CompactTargetBytes: cfg.CompactTarget, MaintainInterval: cfg.MaintainEvery,
		GCGrace: cfg.GCGrace, OrphanGrace: cfg.OrphanGrace, CompactBytesPerSec: cfg.CompactRate,
		NodeID: int32(cfg.NodeID), Logger: logger, Metrics: partition.NewMetrics(reg),
		AfterPut: crashAfterPuts(), WALRepair: cfg.WALRepair, IndexFoldKeys: cfg.IndexFoldKeys,
	})
	if wal.IsCorruption(err) {
		return fmt.Errorf("%w; to start anyway, dropping the WAL from that point on (acknowledged records after it are lost and logged), restart with --wal-repair", err)
	}
	if err != nil {
		return err
	}
	b.log.RegisterGauges(reg)
	b.registerStorageGauge(reg)
	return nil
}

func (b *broker) startKafka(ctx context.Context, cfg *serveConfig, logger *slog.Logger, reg *prometheus.Registry) error {
	clusterID, err := b.meta.ClusterID(ctx)
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	host, portStr, _ := net.SplitHostPort(cfg.Advertise)
	port, _ := strconv.Atoi(portStr)
	b.ln, err = net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", cfg.Listen, err)
	}
	if port == 0 { // --listen :0 in tests: advertise the port we got
		port = b.ln.Addr().(*net.TCPAddr).Port
	}
	var fence groupcoord.Fencer // nil: one node coordinates every group
	if b.etcd != nil {
		fence = &b.late
	}
	groups, err := groupcoord.Open(ctx, groupcoord.Config{Meta: b.meta, Cluster: logCluster{b.log, b.brokerCfg},
		Fence: fence, NodeID: int32(cfg.NodeID), Logger: logger, Registry: reg})
	if err != nil {
		b.ln.Close()
		return err
	}
	b.groups = groups
	// One allocator of producer ids: idempotent producers' and
	// transactional ones' come from the same sequence.
	pids := partition.NewProducerIDs(b.meta)
	var txnFence txncoord.Fencer // nil: one node coordinates every transaction
	if b.etcd != nil {
		txnFence = &b.late
	}
	if err := b.openTxns(ctx, txnFence, int32(cfg.NodeID), pids, logger, reg); err != nil {
		groups.Close()
		b.ln.Close()
		return err
	}
	var view protocol.ClusterView // nil: this broker is the whole cluster
	if b.etcd != nil {
		if err := b.startCluster(ctx, cfg, host, int32(port), logger, reg); err != nil {
			b.closeTxns()
			groups.Close()
			b.ln.Close()
			return err
		}
		view = clusterView{b.node}
	}
	b.srv = protocol.NewServer(protocol.Config{ // the server closes groups
		NodeID: int32(cfg.NodeID), AdvertiseHost: host, AdvertisePort: int32(port), ClusterID: clusterID,
		MaxRequestBytes: int32(cfg.MaxRequestBytes), MaxInflightBytes: cfg.MaxInflight, Logger: logger, Registry: reg, Groups: groups,
		Txns: b.txns, TxnVerify: b.txnVerify,
		ProducerIDs: pids, Cluster: view,
		TableStatus: b.tables.statusEntries,
	}, b.log, b.meta)
	go func() { b.serveErr <- b.srv.Serve(b.ln) }()
	return nil
}

func (b *broker) startHTTP(cfg *serveConfig, reg *prometheus.Registry) error {
	if cfg.HTTPListen == "" {
		return nil
	}
	ln, err := net.Listen("tcp", cfg.HTTPListen)
	if err != nil {
		return fmt.Errorf("--http-listen %s: %w", cfg.HTTPListen, err)
	}
	b.http = &http.Server{Handler: b.httpHandler(reg), ReadHeaderTimeout: 10 * time.Second}
	b.httpDone = make(chan struct{})
	go func() {
		defer close(b.httpDone)
		b.http.Serve(ln)
	}()
	return nil
}

// close shuts the broker down in dependency order.
func (b *broker) close() error {
	b.ready.Store(false)
	var errs []error
	if b.node != nil {
		// First hand every partition and shard over, uploading what is
		// pending, while clients can still be told where they moved.
		ctx, cancel := context.WithTimeout(context.Background(), b.flushTimeout)
		errs = append(errs, b.node.Close(ctx))
		cancel()
	}
	// Before the server, which closes the group coordinator that
	// completions in flight may still reach.
	errs = append(errs, b.closeTxns())
	if b.srv != nil {
		errs = append(errs, b.srv.Close())
	}
	if b.tables != nil { // before the log: the converter reads it
		errs = append(errs, b.tables.close())
	}
	if b.log != nil {
		errs = append(errs, b.log.Close())
	}
	if b.store != nil { // after the log: its final upload needs the store
		errs = append(errs, b.store.Close())
	}
	if b.stopMaintain != nil {
		b.stopMaintain()
	}
	if b.meta != nil {
		errs = append(errs, b.meta.Close())
	}
	if b.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		errs = append(errs, b.http.Shutdown(ctx))
		cancel()
		<-b.httpDone // Serve returns at once after Shutdown
	}
	err := errors.Join(withoutFailure(errs, b.storageFailure())...)
	if err != nil {
		b.logger.Error("shutdown finished with errors", "err", err)
	} else {
		b.logger.Info("shutdown complete")
	}
	return err
}

// setMemoryLimit gives the Go runtime a soft memory limit, so the garbage
// collector works harder before the heap outgrows the caches' budget
// instead of letting it double. GOMEMLIMIT in the environment wins.
func setMemoryLimit(cfg *serveConfig, logger *slog.Logger) {
	if cfg.MemoryLimit < 0 || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	limit := cfg.MemoryLimit
	if limit == 0 {
		// 96 MiB for everything else the heap holds at the peak of a
		// disk-bound produce run (request frames in flight, WAL buffers,
		// the object being built): with the defaults the Go runtime then
		// stays near 224 MiB, and RSS, with the ~66 MiB of the binary's
		// pages, under 300 MiB (corebench).
		limit = cfg.TailCacheBytes + cfg.BlockCacheBytes + 96<<20
	}
	debug.SetMemoryLimit(limit)
	logger.Info("memory limit set", "bytes", limit)
}

func newLogger(cfg *serveConfig) *slog.Logger {
	level, _ := parseLevel(cfg.LogLevel)
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	err := l.UnmarshalText([]byte(s))
	return l, err
}

// crashAfterPuts is a fault-injection seam for crash tests: with
// SEDIMENT_TEST_CRASH_AFTER_PUTS=N the process kills itself with SIGKILL
// right after its N-th object PUT, before the metadata commit.
func crashAfterPuts() func(string) {
	n, err := strconv.Atoi(os.Getenv("SEDIMENT_TEST_CRASH_AFTER_PUTS"))
	if err != nil || n <= 0 {
		return nil
	}
	var puts atomic.Int64
	return func(key string) {
		if puts.Add(1) == int64(n) {
			slog.Warn("SEDIMENT_TEST_CRASH_AFTER_PUTS: killing the process after an object PUT", "key", key)
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
}
