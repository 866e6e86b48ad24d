package readcache

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment-io/sediment/storage/internal/lockrank"
	"github.com/sediment-io/sediment/storage/objectstore"
)

// blockCache caches fixed-size blocks of objects, bounded by bytes, least
// recently used out first. Concurrent misses on one block share a single
// ranged GET. A read prefetches the next `ahead` blocks of its region in the
// background (readahead for sequential consumers: a catch-up reader then
// finds its next blocks loaded, and several GETs are in flight at once).
type blockCache struct {
	store     objectstore.Store
	blockSize int64
	limit     int64
	// hits and misses count lookups; got is told every GET's result.
	hits, misses prometheus.Counter
	got          func(error)
	// loadTimeout bounds one block's GET, which may serve several readers
	// and so runs detached from the first one's context.
	loadTimeout time.Duration

	mu      lockrank.Mutex[lockrank.BlockCache] // guards lru, entries, bytes and closed
	lru     *list.List                          // of *block, most recent at the front
	entries map[blockKey]*block
	bytes   int64
	closed  bool

	ahead    int64         // blocks to read ahead of a read
	prefetch chan struct{} // semaphore bounding readahead GETs
	wg       sync.WaitGroup

	// spare, when set, is memory the cache may hold beyond limit for now:
	// the part of the streams' budget no open stream holds (see
	// streamTable.spare). Readers of upload objects, which do not
	// stream, then have the memory that readers of compacted segments
	// would otherwise use; a stream that opens takes its share back
	// (trim).
	spare func() int64
}

type blockKey struct {
	object string
	index  int64
}

// block is one cached block. ready is closed once data or err is set.
type block struct {
	key   blockKey
	ready chan struct{}
	data  []byte
	err   error
	elem  *list.Element
}

// blockLoadTimeout is the default of Options.BlockLoadTimeout.
const blockLoadTimeout = 30 * time.Second

func newBlockCache(o *Options) *blockCache {
	// Never read ahead more than a quarter of the cache: prefetched
	// blocks must not push out what readers still need.
	ahead := max(min(o.ReadaheadBlocks, o.BlockCacheBytes/o.BlockSize/4), 0)
	return &blockCache{store: o.Store, blockSize: o.BlockSize, limit: o.BlockCacheBytes,
		hits: o.Hits, misses: o.Misses, got: o.Got, ahead: ahead, loadTimeout: o.BlockLoadTimeout,
		lru: list.New(), entries: map[blockKey]*block{}, prefetch: make(chan struct{}, max(ahead, 1))}
}

// read returns n bytes of object at off, as the pieces of the cached blocks
// that hold them (blocks are never written after they load). The
// blocks after the last one read are prefetched when they start before
// aheadLimit (the end of the caller's region).
//
// passing says the caller is a sequential reader done with these bytes, in
// an object that is its partition's alone (a compacted segment object): a
// block it reads past goes to the back of the LRU before the next block
// loads, so the next load evicts that block rather than one another
// partition's reader is still in, and nothing is prefetched. Then the
// cache holds one block per such reader, and every block is fetched once.
// Without it, readers of several partitions each straddling two blocks
// pushed each other's half-read blocks out and fetched every byte twice.
func (c *blockCache) read(ctx context.Context, object string, off, n, aheadLimit int64, passing bool) (spans, error) {
	first, last := off/c.blockSize, (off+n-1)/c.blockSize
	var out spans
	got := int64(0)
	for i := first; i <= last; i++ {
		if i > first && passing {
			c.retire(blockKey{object, i - 1})
		}
		b, err := c.get(ctx, blockKey{object, i})
		if err != nil {
			return nil, err
		}
		lo := max(off-i*c.blockSize, 0)
		hi := min(off+n-i*c.blockSize, int64(len(b)))
		if lo > hi {
			return nil, fmt.Errorf("readcache: object %s ends before byte %d", object, off+n)
		}
		out = append(out, b[lo:hi])
		got += hi - lo
	}
	if got != n {
		return nil, fmt.Errorf("readcache: object %s ends before byte %d", object, off+n)
	}
	for i := last + 1; !passing && i <= last+c.ahead && i*c.blockSize < aheadLimit; i++ {
		c.readahead(blockKey{object, i})
	}
	return out, nil
}

// retire moves a cached block to the back of the LRU: first out.
func (c *blockCache) retire(k blockKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.entries[k]; ok {
		c.lru.MoveToBack(b.elem)
	}
}

// get returns a block, loading it on a miss.
func (c *blockCache) get(ctx context.Context, k blockKey) ([]byte, error) {
	c.mu.Lock()
	b, ok := c.entries[k]
	if ok {
		c.lru.MoveToFront(b.elem)
		c.mu.Unlock()
		c.hits.Inc()
	} else {
		b = c.insertLocked(k)
		c.mu.Unlock()
		c.misses.Inc()
		c.load(ctx, b)
	}
	select {
	case <-b.ready:
		return b.data, b.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *blockCache) insertLocked(k blockKey) *block {
	b := &block{key: k, ready: make(chan struct{})}
	b.elem = c.lru.PushFront(b)
	c.entries[k] = b
	return b
}

// load fetches b with a ranged GET. Failed loads leave the cache so the next
// read retries.
func (c *blockCache) load(ctx context.Context, b *block) {
	// Detach from the caller's cancellation: other readers may wait on
	// this load too.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.loadTimeout)
	defer cancel()
	data, err := c.store.GetRange(ctx, b.key.object, b.key.index*c.blockSize, c.blockSize)
	c.got(err)
	c.mu.Lock()
	defer c.mu.Unlock()
	b.data, b.err = data, err
	close(b.ready)
	if err != nil || c.entries[b.key] != b {
		c.removeLocked(b)
		return
	}
	c.bytes += int64(len(data))
	c.evictLocked()
}

// evictLocked removes least recently used blocks while the cache holds
// more than limit and the spare memory.
func (c *blockCache) evictLocked() {
	budget := c.limit
	if c.spare != nil {
		budget += c.spare()
	}
	for c.bytes > budget && c.lru.Len() > 1 {
		c.removeLocked(c.lru.Back().Value.(*block))
	}
}

// trim evicts down to the cache's current budget.
func (c *blockCache) trim() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evictLocked()
}

func (c *blockCache) removeLocked(b *block) {
	if c.entries[b.key] != b {
		return
	}
	delete(c.entries, b.key)
	c.lru.Remove(b.elem)
	select {
	case <-b.ready:
		c.bytes -= int64(len(b.data))
	default:
	}
}

// readahead loads k in the background if it is not cached, bounded by the
// prefetch semaphore; it gives up silently when all slots are busy.
func (c *blockCache) readahead(k blockKey) {
	c.mu.Lock()
	if _, ok := c.entries[k]; ok || c.closed {
		c.mu.Unlock()
		return
	}
	select {
	case c.prefetch <- struct{}{}:
	default:
		c.mu.Unlock()
		return
	}
	b := c.insertLocked(k)
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		defer func() { <-c.prefetch }()
		c.load(context.Background(), b)
	}()
}

// close waits for readahead loads to finish.
func (c *blockCache) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.wg.Wait()
}
