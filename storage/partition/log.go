package partition

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sediment-io/sediment/config"
	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/internal/lockrank"
	"github.com/sediment-io/sediment/storage/lifecycle"
	"github.com/sediment-io/sediment/storage/manifest"
	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/readcache"
	"github.com/sediment-io/sediment/storage/wal"
)

// Durability says when an append is acknowledged.
type Durability int

const (
	// DurabilityWAL acknowledges after the WAL fsync (the default).
	DurabilityWAL Durability = iota
	// DurabilityObject acknowledges after the object PUT and the metadata
	// commit.
	DurabilityObject
)

// Errors of the live log; the protocol layer maps them to Kafka codes.
var (
	ErrUnknownPartition = errors.New("partition: unknown topic or partition")
	ErrOffsetOutOfRange = errors.New("partition: offset out of range")
	ErrClosed           = errors.New("partition: log is closed")
	ErrStorage          = errors.New("partition: storage unavailable")
	// ErrBatchTooLarge is a batch over the topic's max.message.bytes
	// (MESSAGE_TOO_LARGE).
	ErrBatchTooLarge = errors.New("partition: record batch too large")
)

// Options configures a Log.
type Options struct {
	Meta *metadata.Store
	// BrokerConfig holds the dynamic broker configs that give topic
	// configs their defaults (log.retention.ms, ...). The broker shares one
	// with its other components; nil loads a private one from Meta (a Log
	// used alone, as in tests).
	BrokerConfig *config.Dynamic
	Store        objectstore.Store
	// WALDir holds the WAL segments; WALFS overrides the filesystem (tests).
	WALDir          string
	WALFS           wal.FS
	WALSegmentBytes int64
	// WALRepair starts even if the WAL is corrupt in the middle, by
	// dropping everything after the damage (see wal.Options.Repair); what
	// was lost is logged by partition and offset range.
	WALRepair  bool
	Durability Durability
	// UploadInterval and UploadBytes cut objects: every interval, or as
	// soon as this many bytes wait, whichever comes first.
	UploadInterval time.Duration
	UploadBytes    int64
	// MaxPendingBytes bounds, with --durability object, the bytes held in
	// memory waiting for upload (default 4 objects' worth); appends wait
	// beyond it.
	MaxPendingBytes int64
	// TailCacheBytes bounds the bytes of recent batches kept in memory.
	TailCacheBytes int64
	// BlockCacheBytes bounds the cache of object-store blocks (default 64
	// MiB); BlockSize is the unit of ranged GETs (default 8 MiB). These and
	// the stream options below configure the read cache
	// (storage/readcache), which applies the defaults.
	BlockCacheBytes int64
	BlockSize       int64
	// ReadaheadBlocks is how many blocks a read prefetches beyond itself
	// (default 4, at most a quarter of the block cache: 2 with the default
	// 64 MiB cache and 8 MiB blocks).
	ReadaheadBlocks int64
	// Streams bounds the open streams of compacted segments (see
	// storage/readcache; default one per 8 MiB of BlockCacheBytes, at least 2),
	// each reading up to StreamReadahead bytes ahead of its reader
	// (default 8 MiB, as much as a fetch asks of one partition with
	// fetch.max.partition.bytes at 8 MiB) plus the chunk it is filling:
	// with the defaults 8 streams, 72 MiB. Streams < 0 reads everything through the block
	// cache. What no open stream holds, the block cache may use.
	Streams         int
	StreamReadahead int64
	// StreamStallTimeout abandons a stream whose store sent nothing for
	// that long, and StreamIdleTimeout closes one no reader used for that
	// long (defaults 30 s each). BlockLoadTimeout bounds the GET of one
	// block of the block cache (default 30 s).
	StreamStallTimeout, StreamIdleTimeout, BlockLoadTimeout time.Duration

	NodeID int32
	// Ownership, in a cluster, says which partitions this broker owns and
	// gives their fences (see Ownership); nil: the log owns every
	// partition, as one node always has.
	Ownership Ownership
	Logger    *slog.Logger
	Metrics   *Metrics
	// WALMaxBytes bounds the WAL backlog (bytes not yet uploaded) with
	// --durability wal: past it, appends wait for uploads and then fail
	// with ErrStorage, a retriable error (default 1 GiB).
	WALMaxBytes int64
	// MaintainInterval is how often retention, compaction and garbage
	// collection run (default 30s).
	MaintainInterval time.Duration
	// CompactTargetBytes is the size compaction aims for per output object
	// (default 64 MiB); CompactMinAge is how old a run of small segments
	// below half the target must be before it is compacted anyway
	// (default 10 minutes); CompactChunkBytes is how much one index entry of
	// a compacted object covers (default 4 MiB).
	CompactTargetBytes int64
	CompactMinAge      time.Duration
	CompactChunkBytes  int64
	// CompactBytesPerSec bounds how fast compaction writes, on average
	// (default 8 MiB/s); see storage/lifecycle.
	CompactBytesPerSec int64
	// IndexFoldKeys is how many upload entries a partition's index may
	// hold unfolded before the oldest run of them moves into a manifest
	// object (default 64; see storage/lifecycle's Folder).
	IndexFoldKeys int
	// GCGrace is how long an object no segment references any more stays
	// readable before it is deleted (default 1 minute); OrphanGrace is how
	// old an object metadata never heard of must be before it is deleted
	// as an orphan of a failed commit (default 1 hour).
	GCGrace     time.Duration
	OrphanGrace time.Duration
	// UploadConcurrency is how many objects may be PUT at once (default
	// 4); their commits still apply one at a time, in upload order.
	UploadConcurrency int
	// MaxObjectPartitions bounds the partitions one object holds (0: no
	// bound), so that its commit, a few writes per partition, fits a
	// metadata backend that limits a transaction's operations (etcd: 128).
	// The partitions left out go into the next object.
	MaxObjectPartitions int
	// MaxObjectBatches bounds the record batches one object holds (0: no
	// bound). Its commit records a producer delta per batch (a few dozen
	// bytes each), so that bound keeps the commit within a metadata
	// backend's request size (etcd: 1.5 MiB) however small the batches.
	MaxObjectBatches int
	// UploadRetryDelay is the wait before an object whose PUT or commit
	// failed is tried again (default 1 s). The store retries each request
	// within its own deadlines first; the uploader sets none of its own.
	UploadRetryDelay time.Duration
	// FlushTimeout bounds the final upload when the log closes (default
	// 30 s).
	FlushTimeout time.Duration
	// AfterPut, when set, is called after every successful object PUT and
	// before its metadata commit: a fault-injection seam for crash tests.
	AfterPut func(key string)
	// Now is the broker's clock, from which producer.id.expiration.ms
	// counts (default time.Now; tests move it).
	Now func() time.Time

	tune tuning
}

// tuning holds sizes that tests make small; zero is the default.
type tuning struct {
	streamChunkBytes int // readcache.Options.ChunkBytes
	compactPage      int // lifecycle.Compactor.Page
	retentionPage    int // lifecycle.Retainer.Page
	foldRun          int // lifecycle.Folder.MaxRun
}

func (o *Options) setDefaults() {
	if o.UploadInterval <= 0 {
		o.UploadInterval = 250 * time.Millisecond
	}
	if o.UploadBytes <= 0 {
		o.UploadBytes = 8 << 20
	}
	if o.UploadConcurrency <= 0 {
		o.UploadConcurrency = 4
	}
	if o.UploadRetryDelay <= 0 {
		o.UploadRetryDelay = time.Second
	}
	if o.FlushTimeout <= 0 {
		o.FlushTimeout = 30 * time.Second
	}
	if o.MaxPendingBytes <= 0 {
		o.MaxPendingBytes = 4 * maxObjectBytes(o.UploadBytes)
	}
	if o.TailCacheBytes <= 0 {
		o.TailCacheBytes = 64 << 20
	}
	o.setLifecycleDefaults()
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil)
	}
}

// Log is the broker's log: every partition of every topic, the WAL they
// share, the uploader that moves them to the object store, and the caches
// in front of it.
type Log struct {
	opts    Options
	meta    *metadata.Store
	store   objectstore.Store
	wal     *wal.WAL
	tail    *tailCache
	reads   *readcache.Cache
	up      *uploader
	durable *durableNotifier
	log     *slog.Logger
	m       *Metrics

	compaction *lifecycle.Compactor // keeps its cursors between passes
	retention  *lifecycle.Retainer
	fold       *lifecycle.Folder // keeps its cursors between passes
	manifests  *manifest.Cache   // decoded manifests of folded index entries

	// appendGate is held shared by an append from its WAL append until its
	// partition is marked dirty, and exclusively by the uploader to take a
	// consistent cut of the WAL.
	appendGate lockrank.RWMutex[lockrank.LogAppendGate]

	// topicsMu serializes the changes of the topic set (create, delete,
	// SyncTopics), so that a sync never mistakes a topic created after its
	// read of metadata for one deleted by another broker.
	topicsMu sync.Mutex
	syncedAt atomic.Int64 // UnixNano of the last SyncTopics' start

	mu     lockrank.RWMutex[lockrank.LogTopics] // guards topics and byID
	topics map[string]*Topic
	byID   map[metadata.TopicID]*Topic
	// producerExpiration is producer.id.expiration.ms, a copy of the
	// broker config that appends read without Log.mu.
	producerExpiration atomic.Int64

	closed atomic.Bool
	stop   context.CancelFunc // stops the background goroutines: on Close, or on failure
	done   sync.WaitGroup

	failure *failure // sticky: the WAL, or the owner through Fail, says storage failed
}

// Open loads topics from metadata, recovers the WAL and starts the uploader.
func Open(ctx context.Context, opts Options) (*Log, error) {
	opts.setDefaults()
	if opts.BrokerConfig == nil {
		dyn, err := config.NewDynamic(ctx, opts.Meta, metadata.IsConflict)
		if err != nil {
			return nil, fmt.Errorf("partition: %w", err)
		}
		opts.BrokerConfig = dyn
	}
	l := &Log{
		opts:   opts,
		meta:   opts.Meta,
		store:  opts.Store,
		log:    opts.Logger,
		m:      opts.Metrics,
		topics: map[string]*Topic{},
		byID:   map[metadata.TopicID]*Topic{},
	}
	l.failure = newFailure()
	l.tail = newTailCache(opts.TailCacheBytes)
	l.reads = l.newReadCache()
	if err := l.loadTopics(ctx); err != nil {
		return nil, err
	}
	opts.BrokerConfig.OnChange(l.brokerConfigChanged)
	l.up = newUploader(l)
	l.newLifecycle()
	l.durable = newDurableNotifier(l)
	// Before the WAL opens: from then on a failed fsync may call Fail.
	runCtx, cancel := context.WithCancel(context.Background())
	l.stop = cancel
	start := time.Now()
	if err := l.openWAL(ctx); err != nil {
		cancel()
		return nil, err
	}
	l.up.lastCut = l.wal.Head()
	if err := l.up.releaseWAL(ctx); err != nil {
		cancel()
		l.wal.Close()
		return nil, err
	}
	l.log.Info("log recovered", "topics", len(l.topics), "wal_retained_bytes", l.wal.Stats().Retained,
		"upload_pending_bytes", l.up.Pending(), "took", time.Since(start).Round(time.Millisecond))
	l.done.Add(3)
	go func() {
		defer l.done.Done()
		l.up.run(runCtx)
	}()
	go func() {
		defer l.done.Done()
		l.maintain(runCtx)
	}()
	go func() {
		defer l.done.Done()
		l.durable.run(runCtx)
	}()
	return l, nil
}

func (l *Log) loadTopics(ctx context.Context) error {
	l.setProducerExpiration(l.opts.BrokerConfig.Map())
	topics, err := l.meta.Topics(ctx)
	if err != nil {
		return fmt.Errorf("partition: load topics: %w", err)
	}
	for _, mt := range topics {
		t, err := l.loadTopic(ctx, mt)
		if err != nil {
			return err
		}
		l.topics[t.Name] = t
		l.byID[t.ID] = t
	}
	return nil
}

func (l *Log) loadTopic(ctx context.Context, mt metadata.Topic) (*Topic, error) {
	if l.opts.Ownership != nil {
		return l.loadClusterTopic(ctx, mt)
	}
	t := newTopic(mt, l.opts.BrokerConfig.Map())
	epochs, err := l.meta.TopicLeaderEpochs(ctx, mt.ID)
	if err != nil {
		return nil, fmt.Errorf("partition: load %s: %w", mt.Name, err)
	}
	parts := make([]*Partition, mt.Partitions)
	for i := range parts {
		st, ok, err := l.meta.PartitionState(ctx, mt.ID, int32(i))
		if err != nil {
			return nil, fmt.Errorf("partition: load %s/%d: %w", mt.Name, i, err)
		}
		if !ok {
			return nil, fmt.Errorf("partition: %s/%d has no state in metadata", mt.Name, i)
		}
		parts[i] = l.newPartition(t, int32(i), st)
		if h, ok := epochs[int32(i)]; ok {
			parts[i].epochs = h
		}
		list, err := l.meta.ProducerStates(ctx, mt.ID, int32(i))
		if err != nil {
			return nil, fmt.Errorf("partition: load producers of %s/%d: %w", mt.Name, i, err)
		}
		parts[i].producers = loadProducers(list)
		parts[i].producers.expire(l.producerExpireBefore())
	}
	t.parts.Store(&parts)
	return t, nil
}

// Close stops taking appends, uploads everything pending, and closes the WAL.
// A failed log (see Fail) uploads nothing and writes nothing more: Close
// only stops it and closes its files, and returns the failure.
func (l *Log) Close() error {
	if l.closed.Swap(true) {
		return nil
	}
	l.stop()
	l.done.Wait()
	err := l.failure.get()
	if err == nil {
		err = l.up.flushAll(context.Background())
	}
	if cerr := l.wal.Close(); err == nil {
		err = cerr
	}
	l.reads.Close()
	return err
}

// newReadCache makes the cache that object-store reads go through.
func (l *Log) newReadCache() *readcache.Cache {
	o := l.opts
	return readcache.New(readcache.Options{
		Store:           l.store,
		BlockCacheBytes: o.BlockCacheBytes, BlockSize: o.BlockSize, ReadaheadBlocks: o.ReadaheadBlocks,
		Streams: o.Streams, StreamReadahead: o.StreamReadahead, ChunkBytes: o.tune.streamChunkBytes,
		StreamStallTimeout: o.StreamStallTimeout, StreamIdleTimeout: o.StreamIdleTimeout,
		BlockLoadTimeout: o.BlockLoadTimeout,
		Got: func(err error) {
			l.m.objectOps.WithLabelValues("get", resultLabel(err)).Inc()
		},
		Hits:   l.m.blockCache.WithLabelValues("hit"),
		Misses: l.m.blockCache.WithLabelValues("miss"),
		Logger: l.log,
	})
}

// WALStats reports the WAL's counters.
func (l *Log) WALStats() wal.Stats { return l.wal.Stats() }
