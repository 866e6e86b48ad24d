package partition

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/mem"
)

// faultyKV is a metadata KV whose next transactions apply and then report
// an error, as a remote store's timeout can; the read that follows such a
// transaction can be made to fail too.
type faultyKV struct {
	metadata.KV
	lostAnswers atomic.Int32 // transactions left to apply and then fail
	failTxns    atomic.Int32 // transactions left to fail without applying
	failReads   atomic.Int32 // Gets left to fail
	readAfter   bool         // a lost answer also fails the next Get
}

var errLostAnswer = errors.New("injected: transaction applied, answer lost")

func (k *faultyKV) Txn(ctx context.Context, conds []metadata.Cond, ops []metadata.Op) (int64, error) {
	if k.failTxns.Add(-1) >= 0 {
		return 0, errors.New("injected: metadata unavailable")
	}
	k.failTxns.Store(0)
	rev, err := k.KV.Txn(ctx, conds, ops)
	if err == nil && k.lostAnswers.Add(-1) >= 0 {
		if k.readAfter {
			k.failReads.Add(1)
		}
		return 0, errLostAnswer
	}
	return rev, err
}

func (k *faultyKV) Get(ctx context.Context, key string) (metadata.Item, bool, error) {
	if k.failReads.Add(-1) >= 0 {
		return metadata.Item{}, false, errors.New("injected: read failed")
	}
	k.failReads.Store(0)
	return k.KV.Get(ctx, key)
}

// openFaulty opens the environment's log over a faultyKV.
func openFaulty(t *testing.T, e *logEnv) (*Log, *faultyKV) {
	t.Helper()
	bolt, err := metadata.OpenBolt(filepath.Join(e.dir, "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	kv := &faultyKV{KV: bolt}
	kv.lostAnswers.Store(0)
	e.meta = metadata.NewStore(kv)
	return e.open(), kv
}

// checkNoOrphans asserts that metadata knows every data object stored.
func checkNoOrphans(t *testing.T, e *logEnv) {
	t.Helper()
	for _, key := range storeKeys(t, e.store, uploadPrefix) {
		known, err := e.meta.ObjectKnown(context.Background(), key)
		if err != nil || !known {
			t.Fatalf("object %s is an orphan (known %v, err %v)", key, known, err)
		}
	}
}

// checkSegments asserts that p's committed segments are contiguous from 0
// to end.
func checkSegments(t *testing.T, e *logEnv, p *Partition, end int64) []metadata.Segment {
	t.Helper()
	segs, err := e.meta.Segments(context.Background(), p.topic.ID, p.index, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	next := int64(0)
	for _, s := range segs {
		if s.BaseOffset != next {
			t.Fatalf("%s/%d: segment [%d,%d) after %d: gap or overlap", p.topic.Name, p.index, s.BaseOffset, s.EndOffset, next)
		}
		next = s.EndOffset
	}
	if next != end {
		t.Fatalf("%s/%d: segments end at %d, want %d", p.topic.Name, p.index, next, end)
	}
	return segs
}

// TestAmbiguousCommitSettlesByRead: a commit that applied although its
// caller saw an error is recognised by reading back, never uploaded again.
// In the second case the read-back fails as well, so the next cycle settles
// it before it commits.
func TestAmbiguousCommitSettlesByRead(t *testing.T) {
	for _, readFails := range []bool{false, true} {
		t.Run(fmt.Sprintf("read-back fails %v", readFails), func(t *testing.T) {
			e := newLogEnv(t, func(o *Options) { o.UploadRetryDelay = time.Millisecond })
			l, kv := openFaulty(t, e)
			p := createTopic(t, l, "t", 1, nil).Partition(0)
			produce(t, l, p, testBatch{values: values(2, "a")})
			kv.readAfter = readFails
			kv.lostAnswers.Store(1)
			_, err := l.up.cycle(context.Background())
			if readFails != (err != nil) {
				t.Fatalf("first cycle: err = %v", err)
			}
			uploadAll(t, l)
			produce(t, l, p, testBatch{values: values(1, "b")})
			uploadAll(t, l)
			if n := e.store.Count(mem.OpPut); n != 2 {
				t.Fatalf("%d PUTs for two uploads, want 2", n)
			}
			checkSegments(t, e, p, 3)
			checkNoOrphans(t, e)
			checkContiguous(t, l, p, [][]byte{[]byte("aa"), []byte("ab"), []byte("ba")})
		})
	}
}

// injectGap moves p's next offset in metadata on by n behind the log's
// back, as a second writer would: p's next segment cannot commit.
func injectGap(t *testing.T, kv metadata.KV, p *Partition, n int64) {
	t.Helper()
	ctx := context.Background()
	key := fmt.Sprintf("parts/%s/%010d", p.topic.ID.String(), p.index)
	it, ok, err := kv.Get(ctx, key)
	if err != nil || !ok {
		t.Fatalf("partition state %s: ok %v err %v", key, ok, err)
	}
	var st map[string]any
	if err := json.Unmarshal(it.Value, &st); err != nil {
		t.Fatal(err)
	}
	next, _ := st["next_offset"].(float64)
	st["next_offset"] = int64(next) + n
	b, _ := json.Marshal(st)
	if _, err := kv.Txn(ctx, []metadata.Cond{{Key: key, Version: it.Version}}, []metadata.Op{metadata.Put(key, b)}); err != nil {
		t.Fatal(err)
	}
}

// TestGapOnOnePartitionOfFifty: one partition among 50 whose segment cannot
// commit is taken out of the object: its waiting producer gets an error,
// the other 49 commit, and it comes back from metadata's next offset. The
// 30 upload rounds after it (30 s of the broker's 1 s retry loop) cost one
// PUT each and leave no orphan.
func TestGapOnOnePartitionOfFifty(t *testing.T) {
	e := newLogEnv(t, func(o *Options) {
		o.Durability = DurabilityObject
		o.UploadRetryDelay = time.Millisecond
	})
	l, kv := openFaulty(t, e)
	tp := createTopic(t, l, "fifty", 50, nil)
	bad := tp.Partition(7)
	produceAll := func(round int) []AppendResult {
		res := make([]AppendResult, 50)
		for i, p := range tp.Partitions() {
			var err error
			res[i], err = l.Append(context.Background(), p, testBatch{values: values(1, fmt.Sprintf("r%d-", round))}.encode())
			if err != nil {
				t.Fatalf("round %d: append to %d: %v", round, i, err)
			}
		}
		return res
	}
	first := produceAll(0)
	injectGap(t, kv.KV, bad, 5)
	uploadAll(t, l)
	for i, r := range first {
		err := l.Wait(context.Background(), r)
		if i == 7 && !errors.Is(err, ErrStorage) {
			t.Fatalf("producer of the partition that cannot commit: err = %v, want ErrStorage", err)
		}
		if i != 7 && err != nil {
			t.Fatalf("partition %d: %v", i, err)
		}
	}
	if n := readCounter(t, l.m.partitionResets); n != 1 {
		t.Fatalf("%v partition resets counted, want 1", n)
	}
	for round := 1; round <= 30; round++ {
		res := produceAll(round)
		uploadAll(t, l)
		for i, r := range res {
			if err := l.Wait(context.Background(), r); err != nil {
				t.Fatalf("round %d, partition %d: %v", round, i, err)
			}
		}
	}
	if n := e.store.Count(mem.OpPut); n != 31 {
		t.Fatalf("%d PUTs for 31 upload rounds, want 31", n)
	}
	checkNoOrphans(t, e)
	for i, p := range tp.Partitions() {
		if i != 7 {
			checkSegments(t, e, p, 31)
		}
	}
	if logStart, hw := bad.Offsets(); hw != 5+30 || logStart != 0 {
		t.Fatalf("reset partition: log start %d, high watermark %d; want 0 and 35", logStart, hw)
	}
}

// TestFailedPutHoldsBackLaterCommits: with three objects in flight, the
// first one's PUT fails; the two behind it landed but are not committed
// until the first one is PUT again (under the same key) and commits.
func TestFailedPutHoldsBackLaterCommits(t *testing.T) {
	gate := &gatedStore{Store: mem.New(), ready: make(chan struct{}), release: make(chan struct{})}
	e := newLogEnv(t, func(o *Options) {
		o.Durability = DurabilityObject
		o.UploadConcurrency = 4
		o.Store = gate
	})
	l := e.open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	ctx := context.Background()
	var res []AppendResult
	for i := range 3 {
		r, err := l.Append(ctx, p, testBatch{values: values(1, fmt.Sprintf("b%d", i))}.encode())
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, r)
		l.up.advance(ctx, true) // cuts one object of this batch
		if i == 0 {
			l.up.step.Lock()
			gate.failKey = l.up.queue[0].key
			l.up.step.Unlock()
			close(gate.ready)
		}
	}
	l.up.step.Lock()
	queue := append([]*flight(nil), l.up.queue...)
	var done []chan struct{}
	for _, f := range queue {
		done = append(done, f.done)
	}
	l.up.step.Unlock()
	if len(queue) != 3 {
		t.Fatalf("%d objects in flight, want 3", len(queue))
	}
	<-done[1]
	<-done[2]
	l.up.advance(ctx, false)
	if _, hw := p.Offsets(); hw != 0 {
		t.Fatalf("high watermark %d while the first object is not stored: a later commit went first", hw)
	}
	close(gate.release) // the first PUT fails now
	<-done[0]
	uploadAll(t, l)
	for _, r := range res {
		if err := l.Wait(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	segs := checkSegments(t, e, p, 3)
	for i, s := range segs {
		if s.Object != queue[i].key {
			t.Fatalf("segment %d is in %s, want %s (upload order)", i, s.Object, queue[i].key)
		}
	}
	if n := gate.puts.Load(); n != 4 {
		t.Fatalf("%d PUTs, want 4 (the failed one again, under its key)", n)
	}
}

// gatedStore holds every PUT until ready; the first PUT of failKey then
// waits for release and fails.
type gatedStore struct {
	objectstore.Store
	ready   chan struct{} // closed once failKey is set
	failKey string
	release chan struct{}
	failed  atomic.Bool
	puts    atomic.Int32
}

func (s *gatedStore) Put(ctx context.Context, key string, data []byte, cond objectstore.Condition) (string, error) {
	s.puts.Add(1)
	select {
	case <-s.ready:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	if key == s.failKey && !s.failed.Swap(true) {
		select {
		case <-s.release:
		case <-ctx.Done():
		}
		return "", errors.New("injected: PUT failed")
	}
	return s.Store.Put(ctx, key, data, cond)
}

// TestPipelinedUploadsUnderFaults: producers on four partitions, with
// --durability object, four PUTs in flight, store latency and injected PUT
// failures, then a crash. Every acknowledged record is there exactly once,
// in the order its producer sent it.
func TestPipelinedUploadsUnderFaults(t *testing.T) {
	e := newLogEnv(t, func(o *Options) {
		o.Durability = DurabilityObject
		o.UploadConcurrency = 4
		o.UploadInterval = 2 * time.Millisecond
		o.UploadBytes = 1 << 10
		o.UploadRetryDelay = time.Millisecond
	})
	l := e.open()
	tp := createTopic(t, l, "t", 4, nil)
	e.store.SetLatency(3 * time.Millisecond)
	stop := make(chan struct{})
	var faults sync.WaitGroup
	faults.Add(1)
	go func() {
		defer faults.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			e.store.FailNext(mem.OpPut, 1+i%2, nil)
		}
	}()
	const producers, perProducer = 8, 60
	acked := make([][]string, producers)
	var wg sync.WaitGroup
	for w := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := tp.Partition(int32(w % 4))
			for i := range perProducer {
				v := fmt.Sprintf("w%d-%03d", w, i)
				res, err := l.Append(context.Background(), p, testBatch{values: [][]byte{[]byte(v)}}.encode())
				if err != nil {
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				if l.Wait(ctx, res) == nil {
					acked[w] = append(acked[w], v)
				}
				cancel()
			}
		}()
	}
	wg.Wait()
	close(stop)
	faults.Wait()
	e.crash(l, false)

	l = e.open()
	tp, _ = l.Topic("t")
	seen := map[string]int64{}
	for _, p := range tp.Partitions() {
		_, hw := p.Offsets()
		checkSegments(t, e, p, hw)
		for off, v := range readAll(t, l, p, 0) {
			if prev, dup := seen[string(v)]; dup {
				t.Fatalf("%s at offsets %d and %d: duplicated", v, prev, off)
			}
			seen[string(v)] = off
		}
	}
	total := 0
	for w, vs := range acked {
		total += len(vs)
		last := int64(-1)
		for _, v := range vs {
			off, ok := seen[v]
			if !ok {
				t.Fatalf("acknowledged %s lost", v)
			}
			if off <= last {
				t.Fatalf("producer %d: %s at offset %d before its predecessor at %d", w, v, off, last)
			}
			last = off
		}
	}
	if total == 0 {
		t.Fatal("nothing was acknowledged")
	}
	t.Logf("%d records acknowledged, %d PUTs", total, e.store.Count(mem.OpPut))
}

func readCounter(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// TestOrphanSweepSparesObjectsInFlight: an object whose commit keeps
// failing is older than the orphan grace, yet the sweep leaves it alone: its
// commit comes once metadata is back, and is read from it.
func TestOrphanSweepSparesObjectsInFlight(t *testing.T) {
	e := newLogEnv(t, func(o *Options) {
		o.OrphanGrace = time.Nanosecond
		o.MaintainInterval = time.Hour
		o.TailCacheBytes = 1 // reads come from the object
	})
	l, kv := openFaulty(t, e)
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	produce(t, l, p, testBatch{values: values(2, "l")})
	kv.failTxns.Store(1 << 20)
	if _, err := l.up.cycle(context.Background()); err == nil {
		t.Fatal("commit succeeded through failing metadata")
	}
	kv.failTxns.Store(0)
	l.MaintainOnce(context.Background(), true)
	if keys := storeKeys(t, e.store, uploadPrefix); len(keys) != 1 {
		t.Fatalf("objects %v after the sweep, want the one in flight", keys)
	}
	uploadAll(t, l)
	checkSegments(t, e, p, 2)
	checkNoOrphans(t, e)
	checkContiguous(t, l, p, [][]byte{[]byte("la"), []byte("lb")})
}

// TestObjectInFlightHoldsBatchesOnce: once an object is built, the batch
// bytes read for it (from the WAL once the tail cache evicted them) are
// let go: only the object holds them while its PUT is in flight, and the
// commit still records the producers that wrote in it.
func TestObjectInFlightHoldsBatchesOnce(t *testing.T) {
	e := newLogEnv(t, nil)
	l := e.open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	produce(t, l, p, testBatch{values: values(2, "x"), pid: 7, epoch: 1})
	e.store.Hang(mem.OpPut)
	ctx := context.Background()
	l.up.advance(ctx, true)
	l.up.step.Lock()
	if len(l.up.queue) != 1 {
		l.up.step.Unlock()
		t.Fatalf("%d objects in flight, want 1", len(l.up.queue))
	}
	up := l.up.queue[0].up
	data, prods := up.data, up.producers
	l.up.step.Unlock()
	if data != nil {
		t.Fatal("the flight still holds the batches it copied into its object")
	}
	if len(prods) != 1 || len(prods[0]) != 1 || prods[0][0].ID != 7 {
		t.Fatalf("producer delta of the object: %+v, want producer 7", prods)
	}
	e.store.Unhang()
	uploadAll(t, l)
	checkSegments(t, e, p, 2)
}

// TestMaxObjectPartitions: with a bound on the partitions per object, a
// cut takes that many of the partitions waiting and leaves the others for
// the next object; every batch is committed in the end, each partition's
// segments contiguous, and the WAL is kept for the partitions left out.
func TestMaxObjectPartitions(t *testing.T) {
	e := newLogEnv(t, func(o *Options) { o.MaxObjectPartitions = 3; o.UploadConcurrency = 1 })
	l := e.open()
	topic := createTopic(t, l, "t", 7, nil)
	for i := range 7 {
		produce(t, l, topic.Partition(int32(i)), testBatch{values: values(2, fmt.Sprintf("p%d-", i))})
	}
	e.store.Hang(mem.OpPut)
	defer e.store.Unhang() // on a failure too: closing the log flushes
	l.up.advance(context.Background(), true)
	l.up.step.Lock()
	if len(l.up.queue) != 1 || len(l.up.queue[0].up.parts) != 3 {
		n := -1
		if len(l.up.queue) > 0 {
			n = len(l.up.queue[0].up.parts)
		}
		l.up.step.Unlock()
		t.Fatalf("%d objects cut, the first with %d partitions; want 1 with 3", len(l.up.queue), n)
	}
	l.up.step.Unlock()
	e.store.Unhang()
	uploadAll(t, l)
	for i := range 7 {
		checkSegments(t, e, topic.Partition(int32(i)), 2)
	}
	if n := len(storeKeys(t, e.store, uploadPrefix)); n != 3 {
		t.Fatalf("%d objects for 7 partitions at 3 a piece, want 3", n)
	}
}

// TestMaxObjectBatches: an object holds at most MaxObjectBatches batches,
// so that its commit (a producer delta per batch) fits etcd's request size
// however small the batches; the rest go into the next objects, and every
// partition's log stays whole.
func TestMaxObjectBatches(t *testing.T) {
	e := newLogEnv(t, func(o *Options) { o.MaxObjectBatches = 3; o.UploadConcurrency = 1 })
	l := e.open()
	topic := createTopic(t, l, "t", 2, nil)
	for i := range 2 {
		for j := range 4 {
			produce(t, l, topic.Partition(int32(i)), testBatch{values: values(1, fmt.Sprintf("p%d-%d-", i, j))})
		}
	}
	uploadAll(t, l)
	perObject := map[string]int64{} // one record per batch: offsets count batches
	for i := range 2 {
		for _, s := range checkSegments(t, e, topic.Partition(int32(i)), 4) {
			perObject[s.Object] += s.EndOffset - s.BaseOffset
		}
	}
	for obj, n := range perObject {
		if n > 3 {
			t.Errorf("object %s holds %d batches, want at most 3", obj, n)
		}
	}
}
