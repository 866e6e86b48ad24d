package readcache

import (
	"container/list"
	"context"
	"fmt"
)

// What the cache holds, for tests (theirs and its owner's) that check what
// a read or a prefetch loaded; nothing on the read path calls these.

// Stats is what the cache holds at one moment.
type Stats struct {
	Blocks        int // blocks cached or loading
	OpenStreams   int // streams open, idle or taken
	WarmedStreams int // streams Warm opened, ever
}

// Stats returns what the cache holds now.
func (c *Cache) Stats() Stats {
	var s Stats
	c.blocks.mu.Lock()
	s.Blocks = len(c.blocks.entries)
	c.blocks.mu.Unlock()
	c.streams.mu.Lock()
	s.OpenStreams, s.WarmedStreams = c.streams.open, c.streams.warmed
	c.streams.mu.Unlock()
	return s
}

// WaitBlock waits until the block holding byte pos of object, which a read
// or a prefetch put in the cache, has loaded, and returns its load's error;
// it fails at once when that block is neither loading nor cached.
func (c *Cache) WaitBlock(ctx context.Context, object string, pos int64) error {
	k := blockKey{object, pos / c.blocks.blockSize}
	c.blocks.mu.Lock()
	b, ok := c.blocks.entries[k]
	c.blocks.mu.Unlock()
	if !ok {
		return fmt.Errorf("readcache: block %d of %s is neither loading nor cached", k.index, k.object)
	}
	select {
	case <-b.ready:
		return b.err
	case <-ctx.Done():
		return fmt.Errorf("readcache: block %d of %s never loaded: %w", k.index, k.object, ctx.Err())
	}
}

// SeekHint returns where in r the batch starting at offset lies, as the
// last read left it, without using the hint up; 0 without one.
func (c *Cache) SeekHint(r Region, offset int64) int64 {
	return c.seeks.peek(seekKey{r.Object, r.Pos, offset})
}

// DropBlocks empties the block cache, as a restart would, and keeps the
// seek hints and streams. It waits for the loads read ahead first; a load
// in flight for a reader finishes outside the cache.
func (c *Cache) DropBlocks() {
	b := c.blocks
	b.close()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lru, b.entries, b.bytes, b.closed = list.New(), map[blockKey]*block{}, 0, false
}
