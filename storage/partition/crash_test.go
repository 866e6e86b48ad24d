package partition

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/mem"
)

// checkContiguous asserts that p holds exactly want[0..n) at offsets 0..n.
func checkContiguous(t *testing.T, l *Log, p *Partition, want [][]byte) {
	t.Helper()
	got := readAll(t, l, p, 0)
	if len(got) != len(want) {
		t.Fatalf("%d records after recovery, want %d", len(got), len(want))
	}
	for i, w := range want {
		if string(got[int64(i)]) != string(w) {
			t.Fatalf("offset %d = %q, want %q", i, got[int64(i)], w)
		}
	}
	if _, hw := p.Offsets(); hw != int64(len(want)) {
		t.Fatalf("high watermark %d, want %d", hw, len(want))
	}
}

// TestCrashRecovery: acknowledged batches survive a crash, unacknowledged
// ones may vanish, offsets stay contiguous, and idempotent producer state
// survives so a retried batch is still recognised as a duplicate. How much
// of the unacknowledged tail survives is a race with the WAL flusher; every
// check holds whichever way it goes. The tail is shorter than the producer
// window, so the last acknowledged batch is always still remembered.
func TestCrashRecovery(t *testing.T) {
	for _, tc := range []struct {
		name           string
		uploadFirst    bool
		torn           bool
		unacknowledged int
	}{
		{"wal only", false, false, 3},
		{"after upload", true, false, 3},
		{"torn tail", false, true, metadata.ProducerWindow - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newLogEnv(t, nil)
			l := e.open()
			p := createTopic(t, l, "t", 1, nil).Partition(0)
			var acked [][]byte
			for i := range 10 {
				tb := testBatch{values: [][]byte{[]byte(fmt.Sprintf("acked-%d", i))}, pid: 42, seq: int32(i)}
				produce(t, l, p, tb)
				acked = append(acked, tb.values[0])
				if tc.uploadFirst && i == 5 {
					uploadAll(t, l)
				}
			}
			var tail []testBatch
			for i := range tc.unacknowledged { // appended, never waited for
				tb := testBatch{values: [][]byte{[]byte(fmt.Sprintf("maybe-%d", i))}, pid: 42, seq: int32(10 + i)}
				if _, err := l.Append(context.Background(), p, tb.encode()); err != nil {
					t.Fatal(err)
				}
				tail = append(tail, tb)
			}
			e.crash(l, tc.torn)

			l = e.open()
			tp, _ := l.Topic("t")
			p = tp.Partition(0)
			_, hw := p.Offsets()
			survived := int(hw) - len(acked)
			if survived < 0 || survived > len(tail) {
				t.Fatalf("high watermark %d after recovery: want %d acknowledged records and at most %d more",
					hw, len(acked), len(tail))
			}
			want := acked
			for _, tb := range tail[:survived] {
				want = append(want, tb.values[0])
			}
			checkContiguous(t, l, p, want)
			// The producer retries its last acknowledged batch: still a duplicate.
			retry := testBatch{values: [][]byte{[]byte("acked-9")}, pid: 42, seq: 9}
			checkResend(t, l, p, retry, 9, true)
			// It resends the batches it never saw acknowledged: the survivors
			// are duplicates at their offsets, the rest follow them in order.
			for i, tb := range tail {
				checkResend(t, l, p, tb, int64(len(acked)+i), i < survived)
			}
			for _, tb := range tail[survived:] {
				want = append(want, tb.values[0])
			}
			checkContiguous(t, l, p, want)
		})
	}
}

// checkResend appends tb again, as a producer's retry, and checks that it
// lands at base: as a duplicate of the original when dup, else as new.
func checkResend(t *testing.T, l *Log, p *Partition, tb testBatch, base int64, dup bool) {
	t.Helper()
	res, err := l.Append(context.Background(), p, tb.encode())
	if err != nil || res.Duplicate != dup || res.BaseOffset != base {
		t.Fatalf("resend of sequence %d after recovery: %+v err=%v, want duplicate=%v at offset %d",
			tb.seq, res, err, dup, base)
	}
	if err := l.Wait(context.Background(), res); err != nil {
		t.Fatalf("wait for the resend of sequence %d: %v", tb.seq, err)
	}
}

// TestCrashBetweenPutAndCommit: the uploader's object lands but the crash
// comes before its metadata commit. Recovery re-uploads from the WAL and
// nothing acknowledged is lost or duplicated. The orphan stays in the store,
// referenced by nothing, until its grace period is over; the orphan sweep
// then deletes it and nothing else.
func TestCrashBetweenPutAndCommit(t *testing.T) {
	const grace = time.Hour
	put := make(chan string, 1)
	block := make(chan struct{})
	var once sync.Once
	e := newLogEnv(t, func(o *Options) {
		o.OrphanGrace = grace
		o.AfterPut = func(key string) {
			once.Do(func() {
				put <- key
				<-block // no commit yet: the test crashes the log meanwhile
			})
		}
	})
	clock := &agedStore{Store: e.store}
	e.opts.Store = clock
	l := e.open()
	// The test batches are stamped 1970: keep retention off their segments.
	p := createTopic(t, l, "t", 1, map[string]string{"retention.ms": "-1"}).Partition(0)
	var acked [][]byte
	for i := range 8 {
		v := []byte(fmt.Sprintf("r%d", i))
		produce(t, l, p, testBatch{values: [][]byte{v}})
		acked = append(acked, v)
	}
	orphan := crashInsidePut(e, l, put, block)

	l = e.open()
	tp, _ := l.Topic("t")
	p = tp.Partition(0)
	checkContiguous(t, l, p, acked)
	if n := e.store.Count(mem.OpPut); n != 1 {
		t.Fatalf("%d PUTs before recovery's upload, want the 1 orphan", n)
	}
	uploadAll(t, l)
	checkContiguous(t, l, p, acked)
	live := map[string]bool{}
	for _, seg := range checkSegments(t, e, tp.Partition(0), int64(len(acked))) {
		live[seg.Object] = true
	}
	ctx := context.Background()
	if live[orphan] {
		t.Fatalf("the orphan %s is referenced by a segment", orphan)
	}
	if known, err := e.meta.ObjectKnown(ctx, orphan); err != nil || known {
		t.Fatalf("metadata knows the orphan %s (known=%v err=%v)", orphan, known, err)
	}
	l.MaintainOnce(ctx, true)
	if _, err := e.store.Stat(ctx, orphan); err != nil {
		t.Fatalf("the orphan %s is gone before its grace period is over: %v", orphan, err)
	}

	clock.age.Store(int64(2 * grace))
	for i := 0; i < 3 && !objectstore.IsNotExist(statErr(e.store, orphan)); i++ {
		l.MaintainOnce(ctx, true)
	}
	if err := statErr(e.store, orphan); !objectstore.IsNotExist(err) {
		t.Fatalf("the orphan %s outlived its grace period and three sweeps: %v", orphan, err)
	}
	if keys := storeKeys(t, e.store, uploadPrefix); len(keys) != len(live) {
		t.Fatalf("objects after the sweep %v, want the %d referenced ones", keys, len(live))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = e.open() // reads come from the store, not from caches of the swept log
	tp, _ = l.Topic("t")
	checkContiguous(t, l, tp.Partition(0), acked)
}

// crashInsidePut runs an upload cycle of l until the store has taken its
// object (the AfterPut hook sends its key on put and waits for block), then
// crashes the log, so that the cycle's metadata commit can never land. It
// returns the object's key.
func crashInsidePut(e *logEnv, l *Log, put <-chan string, block chan struct{}) string {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		l.up.cycle(context.Background()) // stops inside AfterPut
	}()
	key := <-put
	e.fs.Crash()
	e.meta.Close() // the process is gone: its metadata commit can never land
	e.meta = nil
	l.closed.Store(true)
	l.stop()
	close(block)
	wg.Wait()
	l.done.Wait()
	l.wal.Close()
	l.reads.Close()
	e.opts.AfterPut = nil
	return key
}

func statErr(s objectstore.Store, key string) error {
	_, err := s.Stat(context.Background(), key)
	return err
}

// agedStore is a mem store whose listings and stats report every object
// older by age, so that a test lets a grace period pass without waiting.
type agedStore struct {
	*mem.Store
	age atomic.Int64 // nanoseconds
}

func (s *agedStore) List(ctx context.Context, prefix, after string, fn func(objectstore.Info) bool) error {
	return s.Store.List(ctx, prefix, after, func(info objectstore.Info) bool { return fn(s.aged(info)) })
}

func (s *agedStore) Stat(ctx context.Context, key string) (objectstore.Info, error) {
	info, err := s.Store.Stat(ctx, key)
	return s.aged(info), err
}

func (s *agedStore) aged(info objectstore.Info) objectstore.Info {
	info.Modified = info.Modified.Add(-time.Duration(s.age.Load()))
	return info
}

func TestIdempotentProducer(t *testing.T) {
	l := newLogEnv(t, nil).open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	b0 := testBatch{values: values(2, "x"), pid: 7, epoch: 0, seq: 0}
	first := produce(t, l, p, b0)
	dup, err := l.Append(context.Background(), p, b0.encode())
	if err != nil || !dup.Duplicate || dup.BaseOffset != first.BaseOffset {
		t.Fatalf("duplicate: %+v err=%v", dup, err)
	}
	if err := l.Wait(context.Background(), dup); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		b    testBatch
		want error
	}{
		{"gap", testBatch{values: values(1, "y"), pid: 7, seq: 5}, ErrOutOfOrderSequence},
		{"old sequence", testBatch{values: values(1, "y"), pid: 7, seq: 1}, ErrOutOfOrderSequence},
		{"new epoch not at 0", testBatch{values: values(1, "y"), pid: 7, epoch: 1, seq: 3}, ErrOutOfOrderSequence},
	}
	for _, tc := range cases {
		if _, err := l.Append(context.Background(), p, tc.b.encode()); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	produce(t, l, p, testBatch{values: values(1, "z"), pid: 7, epoch: 1, seq: 0})
	if _, err := l.Append(context.Background(), p, testBatch{values: values(1, "w"), pid: 7, epoch: 0, seq: 2}.encode()); !errors.Is(err, ErrInvalidEpoch) {
		t.Errorf("old epoch: err = %v", err)
	}
	// A fresh partition accepts only sequence 0 from an unknown producer
	// (KAFKA-15591); a partition with data accepts any.
	fresh := createTopic(t, l, "fresh", 1, nil).Partition(0)
	if _, err := l.Append(context.Background(), fresh, testBatch{values: values(1, "q"), pid: 9, seq: 4}.encode()); !errors.Is(err, ErrOutOfOrderSequence) {
		t.Errorf("unknown producer on empty partition: err = %v", err)
	}
	produce(t, l, p, testBatch{values: values(1, "q"), pid: 9, seq: 4})
}

func TestObjectDurability(t *testing.T) {
	e := newLogEnv(t, func(o *Options) { o.Durability = DurabilityObject; o.TailCacheBytes = 1 })
	l := e.open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	res, err := l.Append(context.Background(), p, testBatch{values: values(3, "o")}.encode())
	if err != nil {
		t.Fatal(err)
	}
	if _, hw := p.Offsets(); hw != 0 {
		t.Fatalf("visible before upload: hw %d", hw)
	}
	done := make(chan error, 1)
	go func() { done <- l.Wait(context.Background(), res) }()
	uploadAll(t, l)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if e.store.Count(mem.OpPut) != 1 {
		t.Fatalf("%d PUTs, want 1", e.store.Count(mem.OpPut))
	}
	checkContiguous(t, l, p, [][]byte{[]byte("oa"), []byte("ob"), []byte("oc")})
	// The tail cache let go of the batch before it was uploaded; once it
	// is, its bytes must go too (they are in the object store now).
	produce := func(v string) AppendResult {
		res, err := l.Append(context.Background(), p, testBatch{values: values(1, v)}.encode())
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	produce("x")
	produce("y") // pushes x out of the one-byte cache while x waits for upload
	uploadAll(t, l)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.refs {
		if r.base == 3 && r.data != nil {
			t.Fatal("an uploaded batch the cache had evicted still holds its bytes")
		}
	}
}

// TestOnePutPerUpload: many partitions with data cost one PUT per upload.
func TestOnePutPerUpload(t *testing.T) {
	e := newLogEnv(t, nil)
	l := e.open()
	tp := createTopic(t, l, "many", 300, nil)
	for _, p := range tp.Partitions() {
		produce(t, l, p, testBatch{values: values(1, "m")})
	}
	uploadAll(t, l)
	if n := e.store.Count(mem.OpPut); n != 1 {
		t.Fatalf("%d PUTs for 300 partitions, want 1", n)
	}
	if st := l.WALStats(); st.Backlog > 64<<10 {
		t.Fatalf("WAL backlog %d after upload: space not released", st.Backlog)
	}
}

func TestDeleteTopicWithPendingData(t *testing.T) {
	e := newLogEnv(t, nil)
	l := e.open()
	p := createTopic(t, l, "gone", 1, nil).Partition(0)
	produce(t, l, p, testBatch{values: values(2, "g")})
	if err := l.DeleteTopic(context.Background(), "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(context.Background(), p, testBatch{values: values(1, "g")}.encode()); !errors.Is(err, ErrUnknownPartition) {
		t.Fatalf("append to deleted: %v", err)
	}
	uploadAll(t, l)
	if l.up.Pending() != 0 {
		t.Fatalf("pending %d after deleting the topic", l.up.Pending())
	}
	// Recreated under the same name: a new topic from offset 0.
	p2 := createTopic(t, l, "gone", 1, nil).Partition(0)
	if res := produce(t, l, p2, testBatch{values: values(1, "n")}); res.BaseOffset != 0 {
		t.Fatalf("recreated topic starts at %d", res.BaseOffset)
	}
}

func TestUploadRetriesStoreFailure(t *testing.T) {
	e := newLogEnv(t, nil)
	l := e.open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	produce(t, l, p, testBatch{values: values(2, "f")})
	e.store.FailNext(mem.OpPut, 3, errors.New("injected 503"))
	// The store does not retry: each cycle tries the PUT once, and the
	// background loop may take one of the failures for its own retry, so
	// count failed cycles rather than expect exactly three.
	failed := 0
	for range 10 {
		if _, err := l.up.cycle(context.Background()); err == nil {
			break
		}
		failed++
	}
	if failed == 0 {
		t.Fatal("upload succeeded through a failing store")
	}
	uploadAll(t, l)
	checkContiguous(t, l, p, [][]byte{[]byte("fa"), []byte("fb")})
	// Every attempt was the same object under the same key: no orphans.
	if keys := storeKeys(t, e.store, uploadPrefix); len(keys) != 1 || e.store.Count(mem.OpPut) != 4 {
		t.Fatalf("objects %v after %d PUTs, want 1 object after 4", keys, e.store.Count(mem.OpPut))
	}
}

// TestObjectDurabilityBackPressure: with --durability object, batches wait
// in memory for upload; past MaxPendingBytes an append waits for room and,
// if the store stays stuck, fails with a retriable storage error instead of
// growing memory without bound.
func TestObjectDurabilityBackPressure(t *testing.T) {
	e := newLogEnv(t, func(o *Options) { o.Durability = DurabilityObject; o.MaxPendingBytes = 1 })
	l := e.open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	if _, err := l.Append(context.Background(), p, testBatch{values: values(1, "a")}.encode()); err != nil {
		t.Fatal(err)
	}
	e.store.Hang(mem.OpPut) // the upload the wait kicks cannot finish
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := l.Append(ctx, p, testBatch{values: values(1, "b")}.encode()); !errors.Is(err, ErrStorage) {
		t.Fatalf("append over the limit: err = %v, want ErrStorage", err)
	}
	e.store.Unhang()
	res, err := l.Append(context.Background(), p, testBatch{values: values(1, "c")}.encode()) // waits for that upload
	if err != nil || res.BaseOffset != 1 {
		t.Fatalf("append after the upload: %+v err=%v", res, err)
	}
}
