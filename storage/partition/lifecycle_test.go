package partition

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/mem"
	"github.com/sediment-io/sediment/storage/record"
)

// lifecycleEnv opens a log whose upkeep is driven by the test.
func lifecycleEnv(t *testing.T, edit func(*Options)) (*logEnv, *Log) {
	e := newLogEnv(t, func(o *Options) {
		o.MaintainInterval = time.Hour
		o.GCGrace = time.Millisecond
		o.OrphanGrace = time.Hour
		if edit != nil {
			edit(o)
		}
	})
	return e, e.open()
}

// produceUploads appends n single-batch uploads of recs records each to p,
// uploading after each so every batch gets its own small object.
func produceUploads(t *testing.T, l *Log, p *Partition, n, recs int, ts int64) [][]byte {
	t.Helper()
	var all [][]byte
	for i := range n {
		vals := make([][]byte, recs)
		for j := range vals {
			vals[j] = []byte(fmt.Sprintf("u%03d-r%02d", i, j))
		}
		produce(t, l, p, testBatch{values: vals, firstTS: ts})
		uploadAll(t, l)
		all = append(all, vals...)
	}
	return all
}

func storeKeys(t *testing.T, s objectstore.Store, prefix string) []string {
	t.Helper()
	var keys []string
	if err := s.List(context.Background(), prefix, "", func(i objectstore.Info) bool {
		keys = append(keys, i.Key)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return keys
}

func TestRetentionByTime(t *testing.T) {
	e, l := lifecycleEnv(t, nil)
	tp := createTopic(t, l, "old", 1, map[string]string{"retention.ms": "60000"})
	p := tp.Partition(0)
	produceUploads(t, l, p, 3, 2, 1000) // timestamps in 1970: expired
	recent := produceUploads(t, l, p, 2, 2, time.Now().UnixMilli())
	l.MaintainOnce(context.Background(), false)
	logStart, hw := p.Offsets()
	if logStart != 6 || hw != 10 {
		t.Fatalf("after retention: log start %d, high watermark %d; want 6 and 10", logStart, hw)
	}
	if _, err := l.Read(context.Background(), p, 0, 1<<20, true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below the log start: %v", err)
	}
	got := readAll(t, l, p, 6)
	for i, v := range recent {
		if string(got[int64(6+i)]) != string(v) {
			t.Fatalf("offset %d = %q, want %q", 6+i, got[int64(6+i)], v)
		}
	}
	if off, _, _, _ := l.OffsetForTime(context.Background(), p, TimestampEarliest); off != 6 {
		t.Fatalf("earliest offset %d, want 6", off)
	}
	time.Sleep(5 * time.Millisecond) // past the 1 ms grace period: the objects go
	l.MaintainOnce(context.Background(), false)
	if keys := storeKeys(t, e.store, uploadPrefix); len(keys) != 2 {
		t.Fatalf("%d upload objects left, want the 2 still referenced: %v", len(keys), keys)
	}
}

// TestRetentionByTimeAcrossPages has time retention expire more segments
// than one page of the index holds, and stop inside a page.
func TestRetentionByTimeAcrossPages(t *testing.T) {
	_, l := lifecycleEnv(t, func(o *Options) { o.tune.retentionPage = 2 })
	p := createTopic(t, l, "paged", 1, map[string]string{"retention.ms": "60000"}).Partition(0)
	produceUploads(t, l, p, 5, 1, 1000) // expired: two pages and a half
	produceUploads(t, l, p, 3, 1, time.Now().UnixMilli())
	l.MaintainOnce(context.Background(), false)
	if logStart, hw := p.Offsets(); logStart != 5 || hw != 8 {
		t.Fatalf("after retention: log start %d, high watermark %d; want 5 and 8", logStart, hw)
	}
	segs, err := l.meta.Segments(context.Background(), p.topic.ID, 0, 0, 0)
	if err != nil || len(segs) == 0 || segs[0].BaseOffset != 5 {
		t.Fatalf("segments left: %+v err=%v; want the first at offset 5", segs, err)
	}
}

func TestRetentionByBytes(t *testing.T) {
	_, l := lifecycleEnv(t, nil)
	p := createTopic(t, l, "big", 1, map[string]string{"retention.bytes": "1"}).Partition(0)
	produceUploads(t, l, p, 4, 1, time.Now().UnixMilli())
	l.MaintainOnce(context.Background(), false)
	if logStart, _ := p.Offsets(); logStart != 3 {
		t.Fatalf("log start %d after byte retention, want 3 (only the newest segment stays)", logStart)
	}
}

func TestCompactedTopicKeepsData(t *testing.T) {
	_, l := lifecycleEnv(t, nil)
	p := createTopic(t, l, "cmp", 1, map[string]string{"cleanup.policy": "compact", "retention.ms": "1"}).Partition(0)
	produceUploads(t, l, p, 3, 1, 1000)
	l.MaintainOnce(context.Background(), false)
	if logStart, _ := p.Offsets(); logStart != 0 {
		t.Fatalf("time retention deleted from a compact-policy topic: log start %d", logStart)
	}
}

func TestCompaction(t *testing.T) {
	e, l := lifecycleEnv(t, func(o *Options) {
		o.CompactTargetBytes = 4096
		o.CompactChunkBytes = 300
		o.CompactMinAge = time.Nanosecond
	})
	p := createTopic(t, l, "c", 1, nil).Partition(0)
	want := produceUploads(t, l, p, 12, 3, time.Now().UnixMilli())
	before, _ := l.meta.Segments(context.Background(), p.topic.ID, 0, 0, 0)
	l.MaintainOnce(context.Background(), false)
	after, _ := l.meta.Segments(context.Background(), p.topic.ID, 0, 0, 0)
	compacted := 0
	for i, s := range after {
		if strings.HasPrefix(s.Object, compactPrefix) {
			compacted++
		}
		if i > 0 && s.BaseOffset != after[i-1].EndOffset {
			t.Fatalf("gap after compaction: %+v then %+v", after[i-1], s)
		}
	}
	if compacted == 0 || len(after) >= len(before) {
		t.Fatalf("compaction did nothing: %d segments before, %d after, %d compacted", len(before), len(after), compacted)
	}
	checkContiguous(t, l, p, want)
	time.Sleep(5 * time.Millisecond) // past the 1 ms grace period: the old objects go
	l.MaintainOnce(context.Background(), false)
	if left := storeKeys(t, e.store, uploadPrefix); len(left) >= 12 {
		t.Fatalf("old upload objects not collected: %d left", len(left))
	}
	checkContiguous(t, l, p, want)
}

// TestCompactionUnderReads: readers racing compaction and garbage
// collection always see the whole log.
func TestCompactionUnderReads(t *testing.T) {
	_, l := lifecycleEnv(t, func(o *Options) {
		o.CompactTargetBytes = 2048
		o.CompactChunkBytes = 200
		o.CompactMinAge = time.Nanosecond
		o.TailCacheBytes = 1
	})
	p := createTopic(t, l, "r", 1, nil).Partition(0)
	want := produceUploads(t, l, p, 30, 2, time.Now().UnixMilli())
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				select {
				case <-stop:
					return
				default:
				}
				checkContiguous(t, l, p, want)
			}
		}()
	}
	for range 5 {
		l.MaintainOnce(context.Background(), false)
	}
	close(stop)
	wg.Wait()
}

func TestOrphanSweep(t *testing.T) {
	e, l := lifecycleEnv(t, func(o *Options) { o.OrphanGrace = time.Nanosecond })
	p := createTopic(t, l, "o", 1, nil).Partition(0)
	produceUploads(t, l, p, 2, 1, time.Now().UnixMilli())
	ctx := context.Background()
	e.store.Put(ctx, "data/0000000000001-0-orphan.obj", []byte("orphan"), objectstore.Condition{})
	e.store.Put(ctx, "elsewhere/keep", []byte("not ours"), objectstore.Condition{})
	l.MaintainOnce(ctx, true)
	if _, err := e.store.Stat(ctx, "data/0000000000001-0-orphan.obj"); !objectstore.IsNotExist(err) {
		t.Fatalf("orphan still there: %v", err)
	}
	if _, err := e.store.Stat(ctx, "elsewhere/keep"); err != nil {
		t.Fatalf("an object outside our prefixes was touched: %v", err)
	}
	if keys := storeKeys(t, e.store, uploadPrefix); len(keys) != 2 {
		t.Fatalf("referenced objects: %v", keys)
	}
}

func TestDeleteRecords(t *testing.T) {
	_, l := lifecycleEnv(t, nil)
	p := createTopic(t, l, "d", 1, nil).Partition(0)
	produceUploads(t, l, p, 3, 2, time.Now().UnixMilli())
	ctx := context.Background()
	if _, err := l.DeleteRecords(ctx, p, 7); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("beyond the high watermark: %v", err)
	}
	if low, err := l.DeleteRecords(ctx, p, 3); err != nil || low != 3 {
		t.Fatalf("delete to 3: low %d err %v", low, err)
	}
	if low, _ := l.DeleteRecords(ctx, p, 1); low != 3 {
		t.Fatalf("a lower offset moved the log start back to %d", low)
	}
	l.MaintainOnce(ctx, false)
	segs, _ := l.meta.Segments(ctx, p.topic.ID, 0, 0, 0)
	if len(segs) != 2 || segs[0].BaseOffset != 2 {
		t.Fatalf("segments after DeleteRecords + retention: %+v", segs)
	}
	if low, err := l.DeleteRecords(ctx, p, -1); err != nil || low != 6 {
		t.Fatalf("delete to the high watermark: low %d err %v", low, err)
	}
}

// TestWALBackPressure: with the store down, produce keeps being
// acknowledged from the WAL until WALMaxBytes wait, then gets a retriable
// error; once the store is back the backlog drains by itself and every
// acknowledged record is there.
func TestWALBackPressure(t *testing.T) {
	e, l := lifecycleEnv(t, func(o *Options) {
		o.WALMaxBytes = 2000
		o.UploadInterval = 10 * time.Millisecond
	})
	p := createTopic(t, l, "bp", 1, nil).Partition(0)
	e.store.SetDown(true)
	var acked [][]byte
	var refused int
	for i := 0; i < 200 && refused == 0; i++ {
		v := []byte(fmt.Sprintf("bp-%03d-%s", i, strings.Repeat("x", 40)))
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		res, err := l.Append(ctx, p, testBatch{values: [][]byte{v}}.encode())
		cancel()
		if errors.Is(err, ErrStorage) {
			refused++
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Wait(context.Background(), res); err != nil {
			t.Fatal(err)
		}
		acked = append(acked, v)
	}
	if refused == 0 || len(acked) == 0 {
		t.Fatalf("%d acknowledged, %d refused: back-pressure never engaged", len(acked), refused)
	}
	e.store.SetDown(false)
	res, err := l.Append(context.Background(), p, testBatch{values: [][]byte{[]byte("after")}}.encode())
	if err != nil {
		t.Fatalf("append after the store came back: %v", err)
	}
	if err := l.Wait(context.Background(), res); err != nil {
		t.Fatal(err)
	}
	checkContiguous(t, l, p, append(acked, []byte("after")))
	if n := e.store.Count(mem.OpPut); n == 0 {
		t.Fatal("no upload happened")
	}
}

// TestStoreHangs: a store whose PUTs hang does not wedge the broker: with
// --durability wal produce keeps being acknowledged from the WAL, and once
// the store answers again the backlog drains by itself.
func TestStoreHangs(t *testing.T) {
	e, l := lifecycleEnv(t, func(o *Options) {
		o.UploadInterval = 5 * time.Millisecond
	})
	p := createTopic(t, l, "h", 2, nil).Partition(1)
	e.store.Hang(mem.OpPut)
	var acked [][]byte
	for i := range 50 {
		v := []byte(fmt.Sprintf("h-%02d", i))
		produce(t, l, p, testBatch{values: [][]byte{v}})
		acked = append(acked, v)
	}
	if l.up.Pending() == 0 {
		t.Fatal("uploads went through a hung store")
	}
	e.store.Unhang()
	for i := 0; i < 500 && l.up.Pending() > 0; i++ {
		time.Sleep(10 * time.Millisecond) // the uploader's own loop drains it
	}
	if n := l.up.Pending(); n != 0 {
		t.Fatalf("%d bytes still pending after the store came back", n)
	}
	checkContiguous(t, l, p, acked)
}

// TestCompactedReadersFetchEachBlockOnce: consumers of three partitions
// read their compacted (one-partition) segments side by side, each fetch
// straddling two blocks, through a block cache of one block per reader.
// Each reader lets go of the block it passes before loading the next, so
// nobody evicts a block another reader is still in, and every block is
// fetched once.
func TestCompactedReadersFetchEachBlockOnce(t *testing.T) {
	const block = 1024
	e, l := lifecycleEnv(t, func(o *Options) {
		o.TailCacheBytes = 1
		o.BlockSize = block
		o.BlockCacheBytes = 3 * block
		o.CompactTargetBytes = 1 << 20
		o.CompactChunkBytes = 1 << 20
		o.CompactMinAge = time.Nanosecond
		o.Streams = -1 // the block cache's path, as when every stream is taken
	})
	tp := createTopic(t, l, "c", 3, nil)
	for range 60 {
		for i := range int32(3) {
			produceUploads(t, l, tp.Partition(i), 1, 4, time.Now().UnixMilli())
		}
	}
	l.MaintainOnce(context.Background(), false)
	blocks := int64(0)
	for i := range int32(3) {
		segs, _ := l.meta.Segments(context.Background(), tp.ID, i, 0, 0)
		if len(segs) != 1 || !strings.HasPrefix(segs[0].Object, compactPrefix) {
			t.Fatalf("partition %d: %d segments after compaction, want one compacted", i, len(segs))
		}
		blocks += (segs[0].Pos+segs[0].Len-1)/block - segs[0].Pos/block + 1
	}
	gets := e.store.Count(mem.OpGetRange)
	next := make([]int64, 3)
	for done := 0; done < 3; {
		done = 0
		for i := range int32(3) {
			res, err := l.Read(context.Background(), tp.Partition(i), next[i], block*3/2, true)
			if err != nil {
				t.Fatalf("partition %d at %d: %v", i, next[i], err)
			}
			if res.Source != "object" {
				done++ // at the end, or at the batch still in the tail cache
				continue
			}
			batches := batchesOf(t, res)
			last := batches[len(batches)-1]
			next[i] = record.BaseOffset(last) + int64(record.ReadHeader(last).LastOffsetDelta) + 1
		}
	}
	for i, n := range next {
		if n < 59*4 {
			t.Fatalf("partition %d read to %d, want at least %d", i, n, 59*4)
		}
	}
	if n := e.store.Count(mem.OpGetRange) - gets; n > blocks {
		t.Fatalf("%d GETs for %d blocks", n, blocks)
	}
}
