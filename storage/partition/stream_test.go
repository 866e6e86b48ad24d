package partition

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/mem"
	"github.com/sediment-io/sediment/storage/record"
)

// compactedEnv is a log with parts partitions of 60 single-batch uploads
// each, compacted into one object per partition whose index entries cover
// chunk bytes each, read with an empty tail cache.
func compactedEnv(t *testing.T, parts int32, chunk int64, edit func(*Options)) (*logEnv, *Log, *Topic, [][][]byte) {
	e, l := lifecycleEnv(t, func(o *Options) {
		o.TailCacheBytes = 1
		o.CompactTargetBytes = 1 << 20
		o.CompactChunkBytes = chunk
		o.CompactMinAge = time.Nanosecond
		if edit != nil {
			edit(o)
		}
	})
	tp := createTopic(t, l, "s", parts, nil)
	want := make([][][]byte, parts)
	for range 60 {
		for i := range parts {
			want[i] = append(want[i], produceUploads(t, l, tp.Partition(i), 1, 4, time.Now().UnixMilli())...)
		}
	}
	l.MaintainOnce(context.Background(), false)
	for i := range parts {
		segs, _ := l.meta.Segments(context.Background(), tp.ID, i, 0, 0)
		if len(segs) < 2 || !strings.HasPrefix(segs[0].Object, compactPrefix) {
			t.Fatalf("partition %d: %d segments after compaction, want several regions of a compacted object", i, len(segs))
		}
	}
	return e, l, tp, want
}

// readInTurns reads parts in turns, one read of max bytes each per round
// starting at the offsets in from, as a fetch of several partitions does,
// until none reads from the object store any more. Every read must continue
// where the last one ended. It returns each partition's record values in
// order.
func readInTurns(t *testing.T, l *Log, parts []*Partition, from []int64, max int) [][][]byte {
	t.Helper()
	got := make([][][]byte, len(parts))
	next := slices.Clone(from)
	for range 100000 {
		progressed := false
		for i, p := range parts {
			res, err := l.Read(context.Background(), p, next[i], max, true)
			if err != nil {
				t.Fatalf("partition %d at %d: %v", i, next[i], err)
			}
			if res.Source != "object" {
				continue // at the end, or at the batch still in the tail cache
			}
			progressed = true
			batches := batchesOf(t, res)
			if !bytes.Equal(bytes.Join(res.Wire, nil), bytes.Join(batches, nil)) {
				t.Fatalf("read at %d: Wire is not the batches back to back", next[i])
			}
			for _, raw := range batches {
				vals := recordValues(t, raw)
				base := record.BaseOffset(raw)
				last := base + int64(record.ReadHeader(raw).LastOffsetDelta)
				if next[i] < base || next[i] > last {
					t.Fatalf("read at %d returned the batch %d-%d", next[i], base, last)
				}
				for o := next[i]; o <= last; o++ {
					got[i] = append(got[i], vals[o])
				}
				next[i] = last + 1
			}
		}
		if !progressed {
			return got
		}
	}
	t.Fatal("the readers never reached the end")
	return nil
}

// readRecords is readInTurns for one reader.
func readRecords(t *testing.T, l *Log, p *Partition, from int64, max int) [][]byte {
	t.Helper()
	return readInTurns(t, l, []*Partition{p}, []int64{from}, max)[0]
}

// checkValues checks that got is want, but for up to the last upload (4
// records), which may still be in the tail rather than the object store.
func checkValues(t *testing.T, what string, got, want [][]byte) {
	t.Helper()
	if len(got) > len(want) || len(got) < len(want)-4 {
		t.Fatalf("%s: %d records, want %d (or the last 4 fewer)", what, len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%s: record %d is %q, want %q", what, i, got[i], want[i])
		}
	}
}

// Readers of compacted segments stream them: one GET per object and
// reader, across the regions of the object index, every record once and
// in order, for readers taking turns as a fetch of several partitions does.
func TestCompactedReadsStreamEachObjectOnce(t *testing.T) {
	e, l, tp, want := compactedEnv(t, 3, 300, func(o *Options) {
		o.BlockSize = 1024 // through the block cache, every object would take many GETs
		o.BlockCacheBytes = 4 * 1024
		o.Streams = 3
	})
	gets := e.store.Count(mem.OpGetRange)
	got := readInTurns(t, l, []*Partition{tp.Partition(0), tp.Partition(1), tp.Partition(2)}, []int64{0, 0, 0}, 700)
	for i := range 3 {
		checkValues(t, fmt.Sprintf("partition %d", i), got[i], want[i])
	}
	if n := e.store.Count(mem.OpGetRange) - gets; n != 3 {
		t.Fatalf("%d GETs for 3 compacted objects read sequentially, want 3", n)
	}
}

// Batches that cross the chunks a stream reads in come out whole and in
// order; the fetch gets them without the chunks being joined.
func TestStreamedBatchesCrossChunks(t *testing.T) {
	e, l, tp, want := compactedEnv(t, 2, 300, func(o *Options) {
		o.tune.streamChunkBytes = 97 // smaller than a batch, and never a multiple of one
		o.StreamReadahead = 1000
		o.Streams = 2
	})
	gets := e.store.Count(mem.OpGetRange)
	got := readInTurns(t, l, []*Partition{tp.Partition(0), tp.Partition(1)}, []int64{0, 0}, 700)
	for i := range 2 {
		checkValues(t, fmt.Sprintf("partition %d", i), got[i], want[i])
	}
	if n := e.store.Count(mem.OpGetRange) - gets; n != 2 {
		t.Fatalf("%d GETs for 2 compacted objects read sequentially, want 2", n)
	}
}

// A reader that starts inside a region finds its batch by reading the
// region from its start; a stream that cannot be opened, or a table with
// fewer streams than readers, leaves the reads to the block cache, and
// every reader still gets its records in order.
func TestStreamedReadsStartAnywhereAndFallBack(t *testing.T) {
	e, l, tp, want := compactedEnv(t, 2, 2000, func(o *Options) { o.Streams = 1 })
	p0, p1 := tp.Partition(0), tp.Partition(1)
	checkValues(t, "from offset 101", readRecords(t, l, p0, 101, 500), want[0][101:])

	e.store.FailNext(mem.OpGetRange, 1, nil)
	checkValues(t, "after a failed open", readRecords(t, l, p1, 0, 500), want[1])

	// Two readers, one stream: they take it from each other.
	got := readInTurns(t, l, []*Partition{p0, p1}, []int64{0, 7}, 300)
	checkValues(t, "partition 0, sharing the stream", got[0], want[0])
	checkValues(t, "partition 1, sharing the stream", got[1], want[1][7:])
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if n := l.reads.Stats().OpenStreams; n != 0 {
		t.Fatalf("%d streams open after Close", n)
	}
}

// brokenStreams is a store whose streams fail after a given number of
// bytes, as a connection dropped in the middle of a body would.
type brokenStreams struct {
	objectstore.Store
	after  int64
	opened atomic.Int64
}

var errBodyDropped = errors.New("test: connection dropped mid-body")

func (s *brokenStreams) OpenRange(ctx context.Context, key string, off, length int64) (io.ReadCloser, error) {
	r, err := s.Store.OpenRange(ctx, key, off, length)
	if err != nil {
		return nil, err
	}
	s.opened.Add(1)
	return struct {
		io.Reader
		io.Closer
	}{io.MultiReader(io.LimitReader(r, s.after), iotest.ErrReader(errBodyDropped)), r}, nil
}

// A stream that breaks in the middle of a read is dropped and the read is
// served through the block cache; the next read opens a new stream where
// the reader is. Every record still comes once, in order.
func TestBrokenStreamFallsBackToBlockCache(t *testing.T) {
	var broken *brokenStreams
	_, l, tp, want := compactedEnv(t, 1, 300, func(o *Options) {
		broken = &brokenStreams{Store: o.Store, after: 1000}
		o.Store = broken
	})
	checkValues(t, "through broken streams", readRecords(t, l, tp.Partition(0), 0, 700), want[0])
	if n := broken.opened.Load(); n < 2 {
		t.Fatalf("%d streams opened, want one after each break", n)
	}
}

// stallingStreams is a store whose streams stop sending after a given
// number of bytes and hang until closed, as a store that stalls would.
type stallingStreams struct {
	objectstore.Store
	after int64
}

func (s *stallingStreams) OpenRange(ctx context.Context, key string, off, length int64) (io.ReadCloser, error) {
	r, err := s.Store.OpenRange(ctx, key, off, length)
	if err != nil {
		return nil, err
	}
	hang := &hangReader{closed: make(chan struct{})}
	return struct {
		io.Reader
		io.Closer
	}{io.MultiReader(io.LimitReader(r, s.after), hang), hang}, nil
}

// hangReader blocks every Read until Close.
type hangReader struct {
	once   sync.Once
	closed chan struct{}
}

func (h *hangReader) Read([]byte) (int, error) {
	<-h.closed
	return 0, errors.New("test: read on a closed body")
}

func (h *hangReader) Close() error {
	h.once.Do(func() { close(h.closed) })
	return nil
}

// A stream whose store stops sending is abandoned after
// StreamStallTimeout and the read is served through the block cache: the
// reader does not hang.
func TestStalledStreamFallsBackToBlockCache(t *testing.T) {
	_, l, tp, want := compactedEnv(t, 1, 300, func(o *Options) {
		o.Store = &stallingStreams{Store: o.Store, after: 1000}
		o.StreamStallTimeout = 50 * time.Millisecond
	})
	checkValues(t, "through stalling streams", readRecords(t, l, tp.Partition(0), 0, 700), want[0])
}

// A reader that reaches the end of one compacted object lets its stream go
// and finds the stream of the next one already open (warmed while it
// finished the last), even when the table holds one stream: still one GET
// per object, every record once and in order.
func TestNextObjectStreamIsWarmed(t *testing.T) {
	e, l, tp, want := compactedEnv(t, 1, 300, func(o *Options) {
		o.CompactTargetBytes = 2000 // several objects per partition
		o.Streams = 1               // room for the next only once the last is let go
	})
	objects := map[string]bool{}
	for i := range int32(1) {
		segs, _ := l.meta.Segments(context.Background(), tp.ID, i, 0, 0)
		for _, s := range segs {
			if strings.HasPrefix(s.Object, compactPrefix) {
				objects[s.Object] = true
			}
		}
	}
	if len(objects) < 3 {
		t.Fatalf("%d compacted objects, want several per partition", len(objects))
	}
	gets := e.store.Count(mem.OpGetRange)
	checkValues(t, "partition 0", readRecords(t, l, tp.Partition(0), 0, 700), want[0])
	if n := e.store.Count(mem.OpGetRange) - gets; n != int64(len(objects)) {
		t.Fatalf("%d GETs for %d compacted objects read sequentially", n, len(objects))
	}
	if l.reads.Stats().WarmedStreams == 0 {
		t.Fatal("no stream was warmed ahead of its reader")
	}
}
