package readcache

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// Options configures a Cache. Store is required; every other field has a
// default.
type Options struct {
	Store objectstore.Store
	// BlockCacheBytes bounds the cached blocks (default 64 MiB); BlockSize
	// is the unit of ranged GETs (default 8 MiB).
	BlockCacheBytes int64
	BlockSize       int64
	// ReadaheadBlocks is how many blocks a read prefetches beyond itself
	// (default 4, at most a quarter of the block cache: 2 with the default
	// 64 MiB cache and 8 MiB blocks).
	ReadaheadBlocks int64
	// Streams bounds the open streams of compacted segments (default one
	// per 8 MiB of BlockCacheBytes, at least 2), each reading up to
	// StreamReadahead bytes ahead of its reader (default 8 MiB) plus the
	// chunk of ChunkBytes (default 1 MiB) it is filling. Streams < 0 reads
	// everything through the block cache. What no open stream holds, the
	// block cache may use.
	Streams         int
	StreamReadahead int64
	ChunkBytes      int
	// StreamStallTimeout abandons a stream whose store sent nothing for
	// that long, and StreamIdleTimeout closes one no reader used for that
	// long (defaults 30 s each). BlockLoadTimeout bounds the GET of one
	// block (default 30 s).
	StreamStallTimeout, StreamIdleTimeout, BlockLoadTimeout time.Duration
	// Got, when set, is called with the result of every GET; Hits and
	// Misses, when set, count block cache lookups.
	Got          func(err error)
	Hits, Misses prometheus.Counter
	Logger       *slog.Logger
}

func (o *Options) setDefaults() {
	if o.BlockCacheBytes <= 0 {
		o.BlockCacheBytes = 64 << 20
	}
	if o.BlockSize <= 0 {
		o.BlockSize = 8 << 20 // at most one GET per 4 MiB of a sequential read, with room to spare
	}
	if o.ReadaheadBlocks <= 0 {
		o.ReadaheadBlocks = 4
	}
	switch {
	case o.Streams == 0:
		o.Streams = int(max(o.BlockCacheBytes/(8<<20), 2))
	case o.Streams < 0:
		o.Streams = 0
	}
	if o.StreamReadahead <= 0 {
		o.StreamReadahead = 8 << 20
	}
	if o.ChunkBytes <= 0 {
		o.ChunkBytes = chunkBytes
	}
	o.StreamStallTimeout = orDuration(o.StreamStallTimeout, streamStall)
	o.StreamIdleTimeout = orDuration(o.StreamIdleTimeout, streamIdle)
	o.BlockLoadTimeout = orDuration(o.BlockLoadTimeout, blockLoadTimeout)
	if o.Got == nil {
		o.Got = func(error) {}
	}
	if o.Hits == nil { // counted, never registered
		o.Hits = prometheus.NewCounter(prometheus.CounterOpts{Name: "readcache_block_hits_total"})
	}
	if o.Misses == nil {
		o.Misses = prometheus.NewCounter(prometheus.CounterOpts{Name: "readcache_block_misses_total"})
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// orDuration returns d, or def when d is not positive.
func orDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Cache reads segments from the object store: the block cache, the streams
// of compacted segments and the seek hints, which share one memory budget.
// It is safe for concurrent use.
type Cache struct {
	blocks  *blockCache
	streams *streamTable
	seeks   seekHints
	log     *slog.Logger
}

// New makes a Cache over opts.Store. Close stops its background reads.
func New(opts Options) *Cache {
	opts.setDefaults()
	c := &Cache{blocks: newBlockCache(&opts), streams: newStreamTable(&opts), log: opts.Logger}
	c.blocks.spare, c.streams.onOpen = c.streams.spare, c.blocks.trim // one budget for both
	return c
}

// CloseIdle closes the streams no reader used for StreamIdleTimeout
// before now; the owner calls it now and then.
func (c *Cache) CloseIdle(now time.Time) { c.streams.sweep(now) }

// Close closes every stream and waits for the block loads read ahead. A
// stream a reader holds is closed when it comes back.
func (c *Cache) Close() {
	c.streams.close()
	c.blocks.close()
}
