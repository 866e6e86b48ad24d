package manifest

import (
	"container/list"
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/sediment-io/sediment/metadata"
)

// Cache reads manifests through Get and keeps the last decoded ones: a
// manifest never changes once written, so a cached one is always right.
type Cache struct {
	// Get reads a whole object from the bucket.
	Get func(ctx context.Context, key string) ([]byte, error)
	// Max bounds the manifests kept (0: DefaultCacheLen).
	Max int

	// mu guards lru and byKey.
	mu    sync.Mutex
	lru   list.List // of *cached, most recent first
	byKey map[string]*list.Element
}

// DefaultCacheLen is the default of Cache.Max.
const DefaultCacheLen = 256

type cached struct {
	key  string
	segs []metadata.Segment
}

// Expand returns the entries entry's manifest lists, checked against
// entry: the same partition, exactly its offsets and bytes. The slice is
// shared: callers never change it.
func (c *Cache) Expand(ctx context.Context, entry metadata.Segment) ([]metadata.Segment, error) {
	if !entry.Manifest {
		return nil, fmt.Errorf("manifest: entry [%d,%d) is not a manifest entry", entry.BaseOffset, entry.EndOffset)
	}
	if segs, ok := c.lookup(entry.Object); ok {
		return segs, nil
	}
	b, err := c.Get(ctx, entry.Object)
	if err != nil {
		return nil, fmt.Errorf("manifest: read %s: %w", entry.Object, err)
	}
	segs, err := Decode(b)
	if err == nil {
		err = check(segs, entry)
	}
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", entry.Object, err)
	}
	c.add(entry.Object, segs)
	return segs, nil
}

// check fails unless segs add up to entry.
func check(segs []metadata.Segment, entry metadata.Segment) error {
	var size int64
	for _, s := range segs {
		if s.Topic != entry.Topic || s.Partition != entry.Partition {
			return fmt.Errorf("%w: lists another partition", ErrCorrupt)
		}
		size += s.Len
	}
	if len(segs) != entry.Entries || segs[0].BaseOffset != entry.BaseOffset || segs[len(segs)-1].EndOffset != entry.EndOffset || size != entry.Len {
		return fmt.Errorf("%w: %d entries cover [%d,%d) in %d bytes, its index entry %d [%d,%d) in %d", ErrCorrupt,
			len(segs), segs[0].BaseOffset, segs[len(segs)-1].EndOffset, size,
			entry.Entries, entry.BaseOffset, entry.EndOffset, entry.Len)
	}
	return nil
}

// Floor returns the entry of segs (consecutive, as Expand returns them)
// with the greatest base offset <= offset; ok is false below the first.
func Floor(segs []metadata.Segment, offset int64) (metadata.Segment, bool) {
	i := sort.Search(len(segs), func(i int) bool { return segs[i].BaseOffset > offset })
	if i == 0 {
		return metadata.Segment{}, false
	}
	return segs[i-1], true
}

func (c *Cache) lookup(key string) ([]metadata.Segment, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(e)
	return e.Value.(*cached).segs, true
}

func (c *Cache) add(key string, segs []metadata.Segment) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey = map[string]*list.Element{}
	}
	if _, ok := c.byKey[key]; ok {
		return
	}
	c.byKey[key] = c.lru.PushFront(&cached{key: key, segs: segs})
	limit := c.Max
	if limit <= 0 {
		limit = DefaultCacheLen
	}
	for c.lru.Len() > limit {
		old := c.lru.Back()
		c.lru.Remove(old)
		delete(c.byKey, old.Value.(*cached).key)
	}
}
