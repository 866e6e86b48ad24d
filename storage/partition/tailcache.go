package partition

import "github.com/sediment-io/sediment/storage/internal/lockrank"

// tailCache bounds the bytes of recent batches held in memory across all
// partitions. Batches leave in append order (oldest first); an evicted batch
// is then read from the WAL (not yet uploaded) or the object store.
type tailCache struct {
	mu    lockrank.Mutex[lockrank.TailCache] // guards queue and bytes
	queue []*batchRef
	head  int // queue[head:] are cached
	bytes int64
	limit int64
}

func newTailCache(limit int64) *tailCache { return &tailCache{limit: limit} }

// push accounts a newly cached batch and returns the oldest batches that no
// longer fit. push is called with the new batch's partition lock held, so the
// caller evicts the victims (evict takes each victim's partition lock) after
// releasing it.
func (c *tailCache) push(r *batchRef) []*batchRef {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queue = append(c.queue, r)
	c.bytes += int64(r.size)
	var victims []*batchRef
	for c.bytes > c.limit && c.head < len(c.queue)-1 {
		v := c.queue[c.head]
		c.queue[c.head] = nil
		c.head++
		c.bytes -= int64(v.size)
		victims = append(victims, v)
	}
	if c.head > len(c.queue)/2 && c.head > 1024 {
		c.queue = append(c.queue[:0], c.queue[c.head:]...)
		c.head = 0
	}
	return victims
}

// Bytes returns the bytes currently accounted to the cache.
func (c *tailCache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
