package partition

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
	"github.com/sediment-io/sediment/storage/objectstore"
)

// foldTS is the timestamp of upload i's first record (its second is one
// millisecond later).
func foldTS(i int) int64 { return 1_700_000_000_000 + int64(i)*1000 }

// foldOptions: maintenance driven by the test, a bound of 8 unfolded
// entries and manifests of at most 5, compaction off (its minimum age is
// never reached) unless a test turns it on.
func foldOptions(o *Options) {
	o.MaintainInterval = time.Hour
	o.GCGrace = time.Millisecond
	o.OrphanGrace = time.Hour
	o.IndexFoldKeys = 8
	o.CompactMinAge = 24 * time.Hour
	o.tune.foldRun = 5
}

// uploadsWithFolds produces n uploads of two records each to p and runs
// maintenance after every tenth, checking each time that the index holds at
// most the bound of plain entries beside its manifest entries. It returns
// every record value by offset.
func uploadsWithFolds(t *testing.T, l *Log, meta *metadata.Store, p *Partition, n int) map[int64][]byte {
	t.Helper()
	want := map[int64][]byte{}
	for i := range n {
		vals := [][]byte{[]byte(fmt.Sprintf("u%03d-a", i)), []byte(fmt.Sprintf("u%03d-b", i))}
		res := produce(t, l, p, testBatch{values: vals, firstTS: foldTS(i)})
		want[res.BaseOffset], want[res.BaseOffset+1] = vals[0], vals[1]
		uploadAll(t, l)
		if i%10 != 9 {
			continue
		}
		l.MaintainOnce(context.Background(), false)
		plain, folded := indexKeys(t, meta, p)
		if plain > l.opts.IndexFoldKeys || folded == 0 {
			t.Fatalf("after %d uploads: %d plain and %d manifest entries, want at most %d plain and some manifests",
				i+1, plain, folded, l.opts.IndexFoldKeys)
		}
	}
	return want
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// indexKeys counts p's plain and manifest index entries.
func indexKeys(t *testing.T, meta *metadata.Store, p *Partition) (plain, folded int) {
	t.Helper()
	segs, err := meta.Segments(context.Background(), p.topic.ID, p.index, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range segs {
		if s.Manifest {
			folded++
		} else {
			plain++
		}
	}
	return plain, folded
}

// checkReadsFrom reads p from every offset of want and checks each record
// is byte-identical.
func checkReadsFrom(t *testing.T, l *Log, p *Partition, want map[int64][]byte) {
	t.Helper()
	for from := range int64(len(want)) {
		got := readAll(t, l, p, from)
		for off := from; off < int64(len(want)); off++ {
			if !bytes.Equal(got[off], want[off]) {
				t.Fatalf("read from %d: offset %d = %q, want %q", from, off, got[off], want[off])
			}
		}
	}
}

// checkOffsetsForTime checks ListOffsets by timestamp over n uploads.
func checkOffsetsForTime(t *testing.T, l *Log, p *Partition, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		for _, tc := range []struct{ ts, off int64 }{{foldTS(i), int64(2 * i)}, {foldTS(i) + 1, int64(2*i + 1)}, {foldTS(i) + 2, int64(2*i + 2)}} {
			off, _, ok, err := l.OffsetForTime(ctx, p, tc.ts)
			if i == n-1 && tc.off == int64(2*n) {
				if err != nil || ok {
					t.Fatalf("timestamp %d past the last record: offset %d ok=%v err=%v", tc.ts, off, ok, err)
				}
				continue
			}
			if err != nil || !ok || off != tc.off {
				t.Fatalf("timestamp %d: offset %d ok=%v err=%v, want %d", tc.ts, off, ok, err, tc.off)
			}
		}
	}
	off, ts, ok, err := l.OffsetForTime(ctx, p, TimestampMax)
	if err != nil || !ok || off != int64(2*n-1) || ts != foldTS(n-1)+1 {
		t.Fatalf("max timestamp: offset %d ts %d ok=%v err=%v", off, ts, ok, err)
	}
}

// After many uploads a partition's index stays within the bound plus one
// entry per fold, on bbolt and on a real etcd, and every offset and every
// timestamp lookup answers as before the folds.
func TestIndexFoldBoundsKeys(t *testing.T) {
	const uploads = 40
	t.Run("bbolt", func(t *testing.T) {
		e, l := lifecycleEnv(t, foldOptions)
		p := createTopic(t, l, "t", 1, map[string]string{"retention.ms": "-1"}).Partition(0)
		want := uploadsWithFolds(t, l, e.meta, p, uploads)
		_, folded := indexKeys(t, e.meta, p)
		if n := counterValue(t, l.m.indexFolds); int(n) != folded || counterValue(t, l.m.indexFoldedKeys) < n*2 ||
			counterValue(t, l.m.manifestBytes) <= 0 {
			t.Fatalf("metrics: %v folds (want %d), %v keys folded, %v manifest bytes", n, folded,
				counterValue(t, l.m.indexFoldedKeys), counterValue(t, l.m.manifestBytes))
		}
		checkReadsFrom(t, l, p, want)
		checkOffsetsForTime(t, l, p, uploads)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l = e.open() // no manifest cached: they are read from the bucket
		tp, _ := l.Topic("t")
		checkReadsFrom(t, l, tp.Partition(0), want)
		checkOffsetsForTime(t, l, tp.Partition(0), uploads)
		checkReferences(t, e, l)
	})
	t.Run("etcd", func(t *testing.T) {
		e := newLogEnv(t, foldOptions)
		endpoint, _ := etcdtest.Start(t)
		l, meta, _ := openEtcdLog(t, e, endpoint)
		e.meta = meta
		p := createTopic(t, l, "t", 1, map[string]string{"retention.ms": "-1"}).Partition(0)
		want := uploadsWithFolds(t, l, meta, p, uploads)
		checkReadsFrom(t, l, p, want)
		checkOffsetsForTime(t, l, p, uploads)
		checkReferences(t, e, l)
	})
}

// checkReferences checks that every object's reference count is exactly
// the number of index entries, folded ones included, that point into it,
// that each manifest is referenced once by its entry, and that no
// referenced object is missing from the store.
func checkReferences(t *testing.T, e *logEnv, l *Log) {
	t.Helper()
	ctx := context.Background()
	want := map[string]int{}
	for _, tp := range l.Topics() {
		for _, p := range tp.Partitions() {
			segs, err := e.meta.Segments(ctx, tp.ID, p.index, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range segs {
				want[s.Object]++
				if !s.Manifest {
					continue
				}
				folded, err := l.manifests.Expand(ctx, s)
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range folded {
					want[f.Object]++
				}
			}
		}
	}
	for obj, n := range want {
		rec, ok, err := e.meta.Object(ctx, obj)
		if err != nil || !ok || rec.Refs != n {
			t.Fatalf("object %s: %d references (record %v, %v), want %d", obj, rec.Refs, ok, err, n)
		}
		if _, err := e.store.Stat(ctx, obj); err != nil {
			t.Fatalf("referenced object %s: %v", obj, err)
		}
	}
	for _, prefix := range []string{uploadPrefix, manifestPrefix, compactPrefix} {
		for _, key := range storeKeys(t, e.store, prefix) {
			if want[key] == 0 {
				if rec, ok, _ := e.meta.Object(ctx, key); ok {
					t.Fatalf("object %s is referenced by no entry but has %d references", key, rec.Refs)
				}
			}
		}
	}
}

// collectUntil runs maintenance until no object the index does not
// reference is left in the store (their grace is a millisecond).
func collectUntil(t *testing.T, e *logEnv, l *Log) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.MaintainOnce(ctx, false)
		garbage, err := e.meta.Garbage(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(garbage) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("garbage left after 10s of passes: %v", garbage)
		}
	}
}

// Retention and compaction after folds release exactly the right
// references: the manifest's data objects and the manifest itself go, no
// record leaks, nothing referenced is deleted, and reads stay identical.
func TestIndexFoldThenRetentionAndCompaction(t *testing.T) {
	t.Run("bbolt", func(t *testing.T) {
		e, l := lifecycleEnv(t, foldOptions)
		foldThenRetentionAndCompaction(t, e, l)
	})
	t.Run("etcd", func(t *testing.T) {
		e := newLogEnv(t, func(o *Options) {
			foldOptions(o)
			o.tune.foldRun = 0 // manifests as large as etcd's limits allow
		})
		endpoint, _ := etcdtest.Start(t)
		l, meta, _ := openEtcdLog(t, e, endpoint)
		e.meta = meta
		foldThenRetentionAndCompaction(t, e, l)
	})
}

func foldThenRetentionAndCompaction(t *testing.T, e *logEnv, l *Log) {
	ctx := context.Background()
	p := createTopic(t, l, "t", 1, map[string]string{"retention.ms": "-1"}).Partition(0)
	want := uploadsWithFolds(t, l, e.meta, p, 80)
	segs, _ := e.meta.Segments(ctx, p.topic.ID, p.index, 0, 0)
	if !segs[0].Manifest || !segs[1].Manifest {
		t.Fatalf("the oldest entries are not folded: %+v", segs[:2])
	}
	// DeleteRecords past the first manifest: retention drops its entry.
	start := segs[0].EndOffset
	if _, err := l.DeleteRecords(ctx, p, start); err != nil {
		t.Fatal(err)
	}
	gone, _ := l.manifests.Expand(ctx, segs[0])
	collectUntil(t, e, l)
	for _, obj := range append([]string{segs[0].Object}, objectsOf(gone)...) {
		if !objectstore.IsNotExist(statErr(e.store, obj)) {
			t.Fatalf("object %s of the retained manifest entry is still stored", obj)
		}
	}
	checkReferences(t, e, l)
	for off := range start {
		delete(want, off)
	}
	checkReadsAbove(t, l, p, start, want)

	// Compaction takes the manifest entries as units.
	l.compaction.MinAge = time.Nanosecond
	collectUntil(t, e, l)
	segs, _ = e.meta.Segments(ctx, p.topic.ID, p.index, 0, 0)
	for _, s := range segs {
		if s.Manifest {
			t.Fatalf("a manifest entry survived compaction: %+v", segs)
		}
	}
	if keys := storeKeys(t, e.store, manifestPrefix); len(keys) != 0 {
		t.Fatalf("manifests left after compaction: %v", keys)
	}
	checkReferences(t, e, l)
	checkReadsAbove(t, l, p, start, want)
}

func objectsOf(segs []metadata.Segment) []string {
	var out []string
	for _, s := range segs {
		out = append(out, s.Object)
	}
	return out
}

// checkReadsAbove reads p from start and checks every record of want.
func checkReadsAbove(t *testing.T, l *Log, p *Partition, start int64, want map[int64][]byte) {
	t.Helper()
	got := readAll(t, l, p, start)
	if len(got) != len(want) {
		t.Fatalf("read %d records from %d, want %d", len(got), start, len(want))
	}
	for off, v := range want {
		if !bytes.Equal(got[off], v) {
			t.Fatalf("offset %d = %q, want %q", off, got[off], v)
		}
	}
}

// foldFaultKV fails every transaction that writes a manifest's reference
// or garbage record while armed: the broker died between the manifest's PUT
// and the fold's commit. With uncertain set it applies the fold and loses
// the answer instead.
type foldFaultKV struct {
	metadata.KV
	mu               sync.Mutex
	armed, uncertain bool
	hits             int
}

func (k *foldFaultKV) Txn(ctx context.Context, conds []metadata.Cond, ops []metadata.Op) (int64, error) {
	k.mu.Lock()
	hit := k.armed && touchesManifest(ops)
	uncertain := k.uncertain
	if hit {
		k.hits++
	}
	k.mu.Unlock()
	if !hit {
		return k.KV.Txn(ctx, conds, ops)
	}
	if uncertain {
		if _, err := k.KV.Txn(ctx, conds, ops); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("injected: answer lost: %w", metadata.ErrUncertain)
	}
	return 0, errors.New("injected: the broker is gone")
}

func touchesManifest(ops []metadata.Op) bool {
	for _, op := range ops {
		if strings.HasPrefix(op.Key, "objects/"+manifestPrefix) || strings.HasPrefix(op.Key, "garbage/"+manifestPrefix) {
			return true
		}
	}
	return false
}

// A fold interrupted between its manifest's PUT and its commit leaves the
// log exactly as it was; the manifest is an orphan, and the sweep deletes
// it. An ambiguous fold that applied is recognised by reading back.
func TestIndexFoldInterruptedAfterPut(t *testing.T) {
	ctx := context.Background()
	fault := &foldFaultKV{}
	e := newLogEnv(t, foldOptions)
	e.wrapKV = func(kv metadata.KV) metadata.KV { fault.KV = kv; return fault }
	clock := &agedStore{Store: e.store}
	e.opts.Store = clock
	l := e.open()
	p := createTopic(t, l, "t", 1, map[string]string{"retention.ms": "-1"}).Partition(0)
	fault.armed = true
	want := map[int64][]byte{}
	for i := range 12 {
		v := []byte(fmt.Sprintf("r%02d", i))
		res := produce(t, l, p, testBatch{values: [][]byte{v}, firstTS: foldTS(i)})
		want[res.BaseOffset] = v
		uploadAll(t, l)
	}
	l.MaintainOnce(ctx, false)
	orphans := storeKeys(t, e.store, manifestPrefix)
	if fault.hits == 0 || len(orphans) != 1 {
		t.Fatalf("%d injected failures, manifests stored %v; want a failed fold and its manifest", fault.hits, orphans)
	}
	if plain, folded := indexKeys(t, e.meta, p); plain != 12 || folded != 0 {
		t.Fatalf("index after the failed fold: %d plain, %d manifest entries; want 12 and 0", plain, folded)
	}
	if known, err := e.meta.ObjectKnown(ctx, orphans[0]); err != nil || known {
		t.Fatalf("metadata knows the unfolded manifest %s (%v, %v)", orphans[0], known, err)
	}
	checkReadsFrom(t, l, p, want)

	fault.mu.Lock()
	fault.armed = false
	fault.mu.Unlock()
	clock.age.Store(int64(2 * time.Hour))
	l.MaintainOnce(ctx, true) // folds for real and sweeps the orphan
	if err := statErr(e.store, orphans[0]); !objectstore.IsNotExist(err) {
		t.Fatalf("the orphan manifest %s survived the sweep: %v", orphans[0], err)
	}
	if _, folded := indexKeys(t, e.meta, p); folded == 0 {
		t.Fatal("no fold after the fault cleared")
	}
	checkReferences(t, e, l)
	checkReadsFrom(t, l, p, want)

	fault.mu.Lock()
	fault.armed, fault.uncertain = true, true
	fault.mu.Unlock()
	for i := 12; i < 24; i++ {
		v := []byte(fmt.Sprintf("r%02d", i))
		res := produce(t, l, p, testBatch{values: [][]byte{v}, firstTS: foldTS(i)})
		want[res.BaseOffset] = v
		uploadAll(t, l)
	}
	before := fault.hits
	l.MaintainOnce(ctx, false)
	if fault.hits == before {
		t.Fatal("no fold met the lost answer")
	}
	if plain, _ := indexKeys(t, e.meta, p); plain > 8 {
		t.Fatalf("%d plain entries after folds whose answers were lost, want at most 8", plain)
	}
	checkReferences(t, e, l)
	checkReadsFrom(t, l, p, want)
}

// A fold by a broker whose fence no longer holds commits nothing, and its
// manifest is discarded.
func TestIndexFoldFenced(t *testing.T) {
	ctx := context.Background()
	e, l := lifecycleEnv(t, foldOptions)
	p := createTopic(t, l, "t", 1, map[string]string{"retention.ms": "-1"}).Partition(0)
	for i := range 12 {
		produce(t, l, p, testBatch{values: [][]byte{[]byte("v")}, firstTS: foldTS(i)})
		uploadAll(t, l)
	}
	rev, err := e.kv.Txn(ctx, nil, []metadata.Op{metadata.Put("own/test", []byte("a"))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.kv.Txn(ctx, nil, []metadata.Op{metadata.Put("own/test", []byte("b"))}); err != nil {
		t.Fatal(err)
	}
	parts := l.lifecycleParts()
	parts[0].Fence = []metadata.Cond{{Key: "own/test", Version: rev}} // taken by another broker since
	err = l.fold.Pass(ctx, parts)
	if !metadata.IsNotOwner(err) {
		t.Fatalf("fold by a broker that lost the partition: %v, want not-owner", err)
	}
	if plain, folded := indexKeys(t, e.meta, p); plain != 12 || folded != 0 {
		t.Fatalf("index after a fenced fold: %d plain, %d manifest entries", plain, folded)
	}
	discarded := storeKeys(t, e.store, manifestPrefix)
	if len(discarded) != 1 {
		t.Fatalf("manifests stored after the fenced fold: %v, want its one", discarded)
	}
	if known, _ := e.meta.ObjectKnown(ctx, discarded[0]); !known {
		t.Fatal("the fenced fold's manifest is not garbage")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !objectstore.IsNotExist(statErr(e.store, discarded[0])) {
		if err := l.collectGarbage(ctx); err != nil || time.Now().After(deadline) {
			t.Fatalf("the fenced fold's manifest is still stored: %v", err)
		}
	}
}

// A reader that found an index entry just before it was folded still reads
// its object: the manifest holds the object's reference.
func TestIndexFoldKeepsObjectsOfEarlierLookups(t *testing.T) {
	ctx := context.Background()
	e, l := lifecycleEnv(t, foldOptions)
	p := createTopic(t, l, "t", 1, map[string]string{"retention.ms": "-1"}).Partition(0)
	for i := range 12 {
		produce(t, l, p, testBatch{values: [][]byte{[]byte(fmt.Sprintf("v%d", i))}, firstTS: foldTS(i)})
		uploadAll(t, l)
	}
	seg, ok, err := e.meta.FloorSegment(ctx, p.topic.ID, p.index, 0)
	if err != nil || !ok || seg.Manifest {
		t.Fatalf("floor before the fold: %+v %v %v", seg, ok, err)
	}
	collectUntil(t, e, l)
	if f, _, _ := e.meta.FloorSegment(ctx, p.topic.ID, p.index, 0); !f.Manifest {
		t.Fatalf("offset 0 is not folded: %+v", f)
	}
	if data, err := e.store.GetRange(ctx, seg.Object, seg.Pos, seg.Len); err != nil || int64(len(data)) != seg.Len {
		t.Fatalf("the object of an earlier lookup: %d bytes, %v", len(data), err)
	}
}

// On a real etcd with its default limits, a fold takes as many entries as
// the removal of its manifest entry can release in one transaction, and
// retention then releases a full manifest: every object goes.
func TestIndexFoldWithinEtcdLimits(t *testing.T) {
	ctx := context.Background()
	e := newLogEnv(t, func(o *Options) {
		foldOptions(o)
		o.tune.foldRun = 0 // derived from etcd's limits
	})
	endpoint, _ := etcdtest.Start(t)
	l, meta, _ := openEtcdLog(t, e, endpoint)
	e.meta = meta
	maxRun := l.foldRun()
	if maxRun != 30 {
		t.Fatalf("a manifest folds at most %d entries on etcd's 128 operations, want 30", maxRun)
	}
	p := createTopic(t, l, "t", 1, map[string]string{"retention.ms": "-1"}).Partition(0)
	for i := range maxRun + 15 {
		produce(t, l, p, testBatch{values: [][]byte{[]byte(fmt.Sprintf("v%d", i))}, firstTS: foldTS(i)})
		uploadAll(t, l)
	}
	l.MaintainOnce(ctx, false)
	segs, _ := meta.Segments(ctx, p.topic.ID, p.index, 0, 0)
	if !segs[0].Manifest || segs[0].Entries != maxRun {
		t.Fatalf("first index entry %+v, want a manifest of %d entries", segs[0], maxRun)
	}
	checkReferences(t, e, l)
	if _, err := l.DeleteRecords(ctx, p, -1); err != nil {
		t.Fatal(err)
	}
	collectUntil(t, e, l)
	if segs, _ := meta.Segments(ctx, p.topic.ID, p.index, 0, 0); len(segs) != 0 {
		t.Fatalf("%d index entries left after DeleteRecords to the end", len(segs))
	}
	for _, prefix := range []string{uploadPrefix, manifestPrefix} {
		if keys := storeKeys(t, e.store, prefix); len(keys) != 0 {
			t.Fatalf("objects left under %s: %v", prefix, keys)
		}
	}
}

// In a cluster the owner folds under its fence, and a broker that does
// not own the partition reads it as a replica (KIP-392) through the
// manifests, byte for byte.
func TestIndexFoldReplicaReads(t *testing.T) {
	c := newCluster(t)
	opts := func(o *Options) {
		foldOptions(o)
		o.Durability = DurabilityObject
	}
	eA, ownA := c.broker(1, opts)
	eB, _ := c.broker(2, opts)
	a := eA.open()
	pa := createTopic(t, a, "t", 1, map[string]string{"retention.ms": "-1"}).Partition(0)
	acquire(t, a, ownA, pa)
	b := eB.open()
	tb, ok := b.Topic("t")
	if !ok {
		t.Fatal("B does not know the topic")
	}
	want := map[int64]string{}
	for i := range 20 {
		v := fmt.Sprintf("v%02d", i)
		acked := waitAsync(a, appendOK(t, a, pa, idem(int32(i), v)))
		uploadOwned(t, a)
		if err := <-acked; err != nil {
			t.Fatalf("append: %v", err)
		}
		want[int64(i)] = v
	}
	a.MaintainOnce(context.Background(), false)
	if plain, folded := indexKeys(t, eA.meta, pa); plain > 8 || folded == 0 {
		t.Fatalf("the owner's index: %d plain, %d manifest entries", plain, folded)
	}
	for from := range int64(20) {
		got, _ := readReplicaAll(t, b, tb.Partition(0), from)
		for off := from; off < 20; off++ {
			if got[off] != want[off] {
				t.Fatalf("replica read from %d: offset %d = %q, want %q", from, off, got[off], want[off])
			}
		}
	}
}
