package readcache

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/sediment-io/sediment/internal/testwait"
	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/mem"
)

// A warm that hangs on the store does not hold up closing the table, and
// leaves nothing open.
func TestCloseCancelsHungWarm(t *testing.T) {
	store := mem.New()
	if _, err := store.Put(context.Background(), "seg/x", []byte("data"), objectstore.Condition{}); err != nil {
		t.Fatal(err)
	}
	store.Hang(mem.OpGetRange)
	defer store.Unhang()
	opts := Options{Store: store, Streams: 2, StreamReadahead: 1 << 20, StreamStallTimeout: time.Hour} // only close can end the open
	opts.setDefaults()
	st := newStreamTable(&opts)
	st.warm("seg/x", 0)
	testwait.Until(t, time.Minute, func() bool { return store.Count(mem.OpGetRange) > 0 }, // until the open has reached the store
		"warm never opened the stream within a minute")
	closed := make(chan struct{})
	go func() {
		st.close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(time.Minute): // a hang guard, not a timing
		t.Fatal("close waited for a warm hung on the store")
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.open != 0 || len(st.idle) != 0 || len(st.opening) != 0 {
		t.Fatalf("after close: %d open, %d idle, %d opening", st.open, len(st.idle), len(st.opening))
	}
}

// TestBlockCacheUsesTheIdleStreamBudget: while no stream is open, the
// block cache may hold the streams' memory too (readers of upload objects
// do not stream); a stream that opens takes its share back, and the cache
// never holds more than its own limit and the unopened streams' memory.
func TestBlockCacheUsesTheIdleStreamBudget(t *testing.T) {
	const block = 1024
	ctx := context.Background()
	store := mem.New()
	if _, err := store.Put(ctx, "data/x", bytes.Repeat([]byte("x"), 16*block), objectstore.Condition{}); err != nil {
		t.Fatal(err)
	}
	// Each stream holds 2 chunks: 4 blocks' worth for both. The reads
	// below give no region end, so nothing is read ahead.
	c := New(Options{Store: store, BlockCacheBytes: 4 * block, BlockSize: block,
		Streams: 2, StreamReadahead: block, ChunkBytes: block})
	defer c.Close()
	blocks, streams := c.blocks, c.streams
	held := func() int64 {
		blocks.mu.Lock()
		defer blocks.mu.Unlock()
		return blocks.bytes
	}
	for i := int64(0); i < 16; i++ {
		if _, err := blocks.read(ctx, "data/x", i*block, block, 0, false); err != nil {
			t.Fatal(err)
		}
	}
	if got := held(); got != 8*block {
		t.Fatalf("no stream open: the cache holds %d bytes, want %d (its 4 blocks and the streams' 4)", got, 8*block)
	}
	s, err := streams.take(ctx, "data/x", 0)
	if err != nil || s == nil {
		t.Fatalf("take: %v", err)
	}
	if got := held(); got != 6*block {
		t.Fatalf("one stream open: the cache holds %d bytes, want %d", got, 6*block)
	}
	streams.drop(s)
	select {
	case <-s.done:
	case <-time.After(time.Minute): // a hang guard, not a timing
		t.Fatal("a dropped stream's goroutine never ended")
	}
	if _, err := blocks.read(ctx, "data/x", 0, block, 0, false); err != nil {
		t.Fatal(err)
	}
	if got := held(); got != 7*block {
		t.Fatalf("stream closed, one more block read: the cache holds %d bytes, want %d", got, 7*block)
	}
}
