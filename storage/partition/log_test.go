package partition

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/objectstore/mem"
	"github.com/sediment-io/sediment/storage/record"
	"github.com/sediment-io/sediment/storage/wal"
)

// logEnv is a Log's durable surroundings: a crashable WAL filesystem, an
// object store and a metadata file, which outlive any one Log.
type logEnv struct {
	t     testing.TB
	fs    *wal.MemFS
	store *mem.Store
	dir   string
	meta  *metadata.Store
	opts  Options
	// kv is the metadata KV under meta while it is open; wrapKV, when set,
	// wraps it (to count or inject).
	kv     metadata.KV
	wrapKV func(metadata.KV) metadata.KV
}

func newLogEnv(t testing.TB, edit func(*Options)) *logEnv {
	e := &logEnv{t: t, fs: wal.NewMemFS(), store: mem.New(), dir: t.TempDir()}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		logger = slog.Default()
	}
	e.opts = Options{
		Logger: logger,
		Store:  e.store, WALDir: "/wal", WALFS: e.fs, WALSegmentBytes: 64 << 10,
		UploadInterval: time.Hour, // tests upload explicitly with uploadAll()
		UploadBytes:    1 << 30,
	}
	if edit != nil {
		edit(&e.opts)
	}
	return e
}

// open opens a Log on the environment, reopening metadata if needed.
func (e *logEnv) open() *Log {
	e.t.Helper()
	if e.meta == nil {
		kv, err := metadata.OpenBolt(filepath.Join(e.dir, "meta.db"))
		if err != nil {
			e.t.Fatal(err)
		}
		e.kv = kv
		if e.wrapKV != nil {
			e.kv = e.wrapKV(kv)
		}
		e.meta = metadata.NewStore(e.kv)
	}
	opts := e.opts
	opts.Meta = e.meta
	l, err := Open(context.Background(), opts)
	if err != nil {
		e.t.Fatalf("open log: %v", err)
	}
	e.t.Cleanup(func() {
		l.Close()
		if e.meta != nil {
			e.meta.Close()
			e.meta = nil
		}
	})
	return l
}

// crash simulates a power loss: unsynced WAL bytes are dropped and the Log's
// goroutines stop without flushing or uploading anything more.
func (e *logEnv) crash(l *Log, torn bool) {
	if torn {
		e.fs.CrashTorn(func(_ string, unsynced int) int { return unsynced / 2 })
	} else {
		e.fs.Crash()
	}
	l.closed.Store(true)
	l.stop()
	l.done.Wait()
	l.wal.Close()
	l.reads.Close()
	e.meta.Close()
	e.meta = nil
}

func createTopic(t *testing.T, l *Log, name string, parts int32, cfg map[string]string) *Topic {
	t.Helper()
	tp, err := l.CreateTopic(context.Background(), name, parts, cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// produce appends a batch and waits for it to be durable.
func produce(t *testing.T, l *Log, p *Partition, tb testBatch) AppendResult {
	t.Helper()
	res, err := l.Append(context.Background(), p, tb.encode())
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	if err := l.Wait(context.Background(), res); err != nil {
		t.Fatalf("wait: %v", err)
	}
	return res
}

// upload runs upload cycles until nothing is pending.
func uploadAll(t *testing.T, l *Log) {
	t.Helper()
	for range 100 {
		more, err := l.up.cycle(context.Background())
		if err != nil {
			t.Fatalf("upload: %v", err)
		}
		if !more && l.up.Pending() == 0 {
			return
		}
	}
	t.Fatal("upload did not drain")
}

// readAll reads p from offset to its high watermark and returns every
// record value by offset.
// batchesOf returns res's batches, each in one slice.
func batchesOf(t *testing.T, res FetchResult) [][]byte {
	t.Helper()
	batches, err := res.WholeBatches()
	if err != nil {
		t.Fatalf("batches of a read: %v", err)
	}
	return batches
}

func readAll(t *testing.T, l *Log, p *Partition, from int64) map[int64][]byte {
	t.Helper()
	got := map[int64][]byte{}
	for off := from; ; {
		res, err := l.Read(context.Background(), p, off, 1<<20, true)
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		batches := batchesOf(t, res)
		if len(batches) == 0 {
			return got
		}
		for _, raw := range batches {
			for o, v := range recordValues(t, raw) {
				if o >= off {
					got[o] = v
				}
			}
			off = record.BaseOffset(raw) + int64(record.ReadHeader(raw).LastOffsetDelta) + 1
		}
	}
}

// recordValues decodes a test batch.
func recordValues(t *testing.T, raw []byte) map[int64][]byte {
	out := map[int64][]byte{}
	err := record.Decode(raw, func(r record.Record) error {
		out[r.Offset] = append([]byte(nil), r.Value...)
		return nil
	})
	if err != nil {
		t.Fatalf("bad record: %v", err)
	}
	return out
}

func TestAppendReadTail(t *testing.T) {
	l := newLogEnv(t, nil).open()
	p := createTopic(t, l, "t", 2, nil).Partition(1)
	for i := range 5 {
		res := produce(t, l, p, testBatch{values: values(3, string(rune('A'+i)))})
		if res.BaseOffset != int64(3*i) {
			t.Fatalf("batch %d at offset %d", i, res.BaseOffset)
		}
	}
	got := readAll(t, l, p, 0)
	if len(got) != 15 || !bytes.Equal(got[4], []byte("Bb")) {
		t.Fatalf("read %d records, offset 4 = %q", len(got), got[4])
	}
	if _, hw := p.Offsets(); hw != 15 {
		t.Fatalf("high watermark %d", hw)
	}
	if got := readAll(t, l, p, 7); len(got) != 8 {
		t.Fatalf("read from 7: %d records", len(got))
	}
}

func TestReadFromObjectStore(t *testing.T) {
	e := newLogEnv(t, func(o *Options) { o.TailCacheBytes = 1; o.BlockSize = 256 })
	l := e.open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	for i := range 20 {
		produce(t, l, p, testBatch{values: values(4, string(rune('a'+i)))})
	}
	uploadAll(t, l)
	gets := e.store.Count(mem.OpGetRange)
	got := readAll(t, l, p, 0)
	if len(got) != 80 || !bytes.Equal(got[79], []byte("td")) {
		t.Fatalf("read %d records, offset 79 = %q", len(got), got[79])
	}
	if e.store.Count(mem.OpGetRange) == gets {
		t.Fatal("read did not touch the object store")
	}
	if got := readAll(t, l, p, 37); len(got) != 43 {
		t.Fatalf("read from 37: %d records", len(got))
	}
}

// TestHighWatermarkFollowsFsync: an append nobody waits for (acks=0)
// becomes visible once the WAL fsync covers it, without an upload.
func TestHighWatermarkFollowsFsync(t *testing.T) {
	l := newLogEnv(t, nil).open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	if _, err := l.Append(context.Background(), p, testBatch{values: values(2, "z")}.encode()); err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{}, 1)
	p.Notify(ch)
	defer p.StopNotify(ch)
	if err := l.wal.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		if _, hw := p.Offsets(); hw == 2 {
			return
		}
		select {
		case <-ch:
			p.Notify(ch)
		case <-time.After(10 * time.Millisecond):
		}
	}
	_, hw := p.Offsets()
	t.Fatalf("high watermark %d after the fsync, want 2", hw)
}

// TestSequentialObjectReadGetsEachBlockOnce: a consumer reading a long
// segment one batch per fetch, with a block cache far smaller than the
// segment, GETs each block about once: a fetch starts where the previous
// one ended instead of walking the segment's batch headers from its start
// (which would GET the evicted early blocks again, every fetch).
func TestSequentialObjectReadGetsEachBlockOnce(t *testing.T) {
	e := newLogEnv(t, func(o *Options) {
		o.TailCacheBytes = 1
		o.BlockSize = 256
		o.BlockCacheBytes = 1024
	})
	l := e.open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	const batches = 200
	for i := range batches {
		produce(t, l, p, testBatch{values: values(2, fmt.Sprintf("record-%03d", i))})
	}
	uploadAll(t, l)
	segs, err := e.meta.Segments(context.Background(), p.Topic().ID, 0, 0, 10)
	if err != nil || len(segs) != 1 {
		t.Fatalf("%d segments (%v), want the one upload", len(segs), err)
	}
	blocks := (segs[0].Pos+segs[0].Len)/256 + 1
	gets := e.store.Count(mem.OpGetRange)
	for off := int64(0); off < 2*batches; {
		res, err := l.Read(context.Background(), p, off, 1, true) // one batch per fetch
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		batches := batchesOf(t, res)
		if len(batches) != 1 {
			t.Fatalf("read at %d: %d batches", off, len(batches))
		}
		off = record.BaseOffset(batches[0]) + int64(record.ReadHeader(batches[0]).LastOffsetDelta) + 1
	}
	if n := e.store.Count(mem.OpGetRange) - gets; n > blocks+2 {
		t.Fatalf("%d GETs for a segment of %d blocks read once", n, blocks)
	}
}

// TestPrefetchLoadsTheBlockAReadStartsIn: Prefetch loads, in the
// background, the block of the upload object where the next read of a
// partition begins; it leaves the seek hint that read needs, and does
// nothing for a read the tail serves.
func TestPrefetchLoadsTheBlockAReadStartsIn(t *testing.T) {
	const block = 1024
	e := newLogEnv(t, func(o *Options) { o.TailCacheBytes = 1; o.BlockSize = block })
	l := e.open()
	topic := createTopic(t, l, "t", 2, nil)
	p0, p1 := topic.Partition(0), topic.Partition(1)
	for i := range 30 {
		produce(t, l, p0, testBatch{values: values(2, fmt.Sprintf("p0-%02d", i))})
		produce(t, l, p1, testBatch{values: values(2, fmt.Sprintf("p1-%02d", i))})
	}
	uploadAll(t, l)
	ctx := context.Background()
	produce(t, l, p0, testBatch{values: values(1, "tail")}) // not uploaded: the tail serves it
	gets := e.store.Count(mem.OpGetRange)
	l.Prefetch(ctx, p0, 60)
	// A load Prefetch starts is in the cache before its GET: none there,
	// none coming.
	if n := l.reads.Stats().Blocks; n != 0 {
		t.Fatalf("Prefetch of a tail read started %d loads", n)
	}
	if n := e.store.Count(mem.OpGetRange) - gets; n != 0 {
		t.Fatalf("Prefetch of a tail read made %d GETs", n)
	}

	first, err := l.Read(ctx, p1, 0, 1, true) // leaves a hint for offset 2
	if err != nil || first.Bytes == 0 {
		t.Fatalf("read p1 at 0: %v (%d bytes)", err, first.Bytes)
	}
	seg, ok, err := e.meta.FloorSegment(ctx, topic.ID, 1, 2)
	if err != nil || !ok {
		t.Fatalf("segment of p1 offset 2: %v", err)
	}
	l.reads.DropBlocks() // start from an empty cache, as after a restart

	start := seg.Pos + int64(first.Bytes) // where the batch at offset 2 is
	gets = e.store.Count(mem.OpGetRange)
	l.Prefetch(ctx, p1, 2)
	waitBlock(t, l, seg.Object, start) // where the batch at offset 2 begins
	if n := e.store.Count(mem.OpGetRange) - gets; n != 1 {
		t.Fatalf("Prefetch made %d GETs, want 1", n)
	}
	if pos := l.reads.SeekHint(region(seg), 2); pos != int64(first.Bytes) {
		t.Fatalf("seek hint after Prefetch: %d, want %d", pos, first.Bytes)
	}
	if res, err := l.Read(ctx, p1, 2, 1, true); err != nil || record.BaseOffset(batchesOf(t, res)[0]) != 2 {
		t.Fatalf("read p1 at 2: %v", err)
	}
}

// TestReadAtARegionsEndPrefetchesTheNextSegment: a read that reaches the
// end of a partition's region in one upload object has the block where the
// partition's next segment (in the next object) begins loaded in the
// background, so the next fetch does not wait for that GET.
func TestReadAtARegionsEndPrefetchesTheNextSegment(t *testing.T) {
	const block = 1024
	e := newLogEnv(t, func(o *Options) { o.TailCacheBytes = 1; o.BlockSize = block })
	l := e.open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	for i := range 10 {
		produce(t, l, p, testBatch{values: values(2, fmt.Sprintf("first-%02d", i))})
	}
	uploadAll(t, l)
	for i := range 10 {
		produce(t, l, p, testBatch{values: values(2, fmt.Sprintf("second-%02d", i))})
	}
	uploadAll(t, l)
	ctx := context.Background()
	segs, err := e.meta.Segments(ctx, p.Topic().ID, 0, 0, 10)
	if err != nil || len(segs) != 2 || segs[0].Object == segs[1].Object {
		t.Fatalf("segments %+v (%v), want two in two objects", segs, err)
	}
	res, err := l.Read(ctx, p, 0, 1<<20, true) // the whole first segment
	if err != nil || res.Bytes != int(segs[0].Len) {
		t.Fatalf("read at 0: %v (%d of %d bytes)", err, res.Bytes, segs[0].Len)
	}
	waitBlock(t, l, segs[1].Object, segs[1].Pos) // the next segment's first block
	if got := readAll(t, l, p, 20); len(got) != 20 {
		t.Fatalf("read from 20: %d records", len(got))
	}
}

// waitBlock waits until the block holding byte pos of object, which a
// read or Prefetch put in l's read cache, has loaded; the test fails if
// that block is not there or its load failed.
func waitBlock(t *testing.T, l *Log, object string, pos int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard, not a timing
	defer cancel()
	if err := l.reads.WaitBlock(ctx, object, pos); err != nil {
		t.Fatal(err)
	}
}
