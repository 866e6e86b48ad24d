package partition

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/sediment-io/sediment/internal/testwait"
	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/mem"
)

// fakeOwnership is a broker's ownership as the tests decide it: take
// writes the partition's owner key (a plain Put standing for a lease key)
// and holds its fence; lose forgets it without touching the key.
type fakeOwnership struct {
	kv     metadata.KV
	node   int
	mu     sync.Mutex // guards fences
	fences map[metadata.PartitionKey]metadata.Cond
	valid  atomic.Bool
	sweeps atomic.Bool
}

func newFakeOwnership(kv metadata.KV, node int) *fakeOwnership {
	o := &fakeOwnership{kv: kv, node: node, fences: map[metadata.PartitionKey]metadata.Cond{}}
	o.valid.Store(true)
	return o
}

func ownKeyOf(id metadata.TopicID, p int32) string { return fmt.Sprintf("own/parts/%s/%010d", id, p) }

// take writes the owner key and holds its fence.
func (o *fakeOwnership) take(t testing.TB, id metadata.TopicID, p int32) metadata.Cond {
	t.Helper()
	key := ownKeyOf(id, p)
	rev, err := o.kv.Txn(context.Background(), nil, []metadata.Op{metadata.Put(key, []byte(fmt.Sprintf(`{"node_id":%d}`, o.node)))})
	if err != nil {
		t.Fatal(err)
	}
	fence := metadata.Cond{Key: key, Version: rev}
	o.mu.Lock()
	o.fences[metadata.PartitionKey{Topic: id, Partition: p}] = fence
	o.mu.Unlock()
	return fence
}

func (o *fakeOwnership) lose(id metadata.TopicID, p int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.fences, metadata.PartitionKey{Topic: id, Partition: p})
}

func (o *fakeOwnership) Fence(id metadata.TopicID, p int32) (metadata.Cond, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f, ok := o.fences[metadata.PartitionKey{Topic: id, Partition: p}]
	return f, ok
}

func (o *fakeOwnership) Valid() bool  { return o.valid.Load() }
func (o *fakeOwnership) Sweeps() bool { return o.sweeps.Load() }

// cluster is brokers sharing one metadata store and one bucket, each with
// its own WAL and its own metadata Store (and commit cache) over it.
type cluster struct {
	t     *testing.T
	store *mem.Store
	// kv returns a new client of the shared metadata (memkv: the one KV).
	kv func() metadata.KV
	// shared is a client the test itself reads through.
	shared metadata.KV
}

func newCluster(t *testing.T) *cluster {
	kv := newMemKV()
	return &cluster{t: t, store: mem.New(), kv: func() metadata.KV { return kv }, shared: kv}
}

// newEtcdCluster is a cluster whose metadata is a real embedded etcd.
func newEtcdCluster(t *testing.T) *cluster {
	endpoint, _ := etcdtest.Start(t)
	open := func() metadata.KV { return etcdtest.OpenKV(t, endpoint, "sediment") }
	shared := open()
	return &cluster{t: t, store: mem.New(), kv: open, shared: shared}
}

// broker returns a node's environment and its ownership (which writes its
// owner keys through a client of its own, as a session would).
func (c *cluster) broker(node int, edit func(*Options)) (*logEnv, *fakeOwnership) {
	ownKV := c.kv()
	c.t.Cleanup(func() { ownKV.Close() })
	own := newFakeOwnership(ownKV, node)
	e := newLogEnv(c.t, func(o *Options) {
		o.Store, o.NodeID, o.Ownership = c.store, int32(node), own
		if edit != nil {
			edit(o)
		}
	})
	e.store = c.store
	e.meta = metadata.NewStore(c.kv())
	return e, own
}

// reopen opens the node's log again over the shared metadata, after crash.
func (c *cluster) reopen(e *logEnv) *Log {
	e.meta = metadata.NewStore(c.kv())
	return e.open()
}

// acquire takes the partition's owner key for own and makes l its owner.
func acquire(t *testing.T, l *Log, own *fakeOwnership, p *Partition) {
	t.Helper()
	own.take(t, p.topic.ID, p.index)
	if err := l.Acquire(context.Background(), p.topic.ID, p.index); err != nil {
		t.Fatalf("acquire %s/%d: %v", p.topic.Name, p.index, err)
	}
}

// appendOK appends a batch and returns its result without waiting.
func appendOK(t *testing.T, l *Log, p *Partition, tb testBatch) AppendResult {
	t.Helper()
	res, err := l.Append(context.Background(), p, tb.encode())
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	return res
}

// waitAsync waits for res in a goroutine and returns its result channel.
func waitAsync(l *Log, res AppendResult) <-chan error {
	ch := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		ch <- l.Wait(ctx, res)
	}()
	return ch
}

// committedNext is the partition's next offset in metadata.
func committedNext(t *testing.T, m *metadata.Store, p *Partition) int64 {
	t.Helper()
	st, _, err := m.PartitionState(context.Background(), p.topic.ID, p.index)
	if err != nil {
		t.Fatal(err)
	}
	return st.NextOffset
}

// checkOwnedValues checks that p, read through l, holds exactly want from offset 0.
func checkOwnedValues(t *testing.T, l *Log, p *Partition, want []string) {
	t.Helper()
	got := readAll(t, l, p, 0)
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d: %v", len(got), len(want), got)
	}
	for i, v := range want {
		if string(got[int64(i)]) != v {
			t.Fatalf("offset %d holds %q, want %q", i, got[int64(i)], v)
		}
	}
}

// uploadOwned runs upload cycles until nothing this log may upload is
// left (the batches of partitions it does not own stay).
func uploadOwned(t *testing.T, l *Log) {
	t.Helper()
	for range 100 {
		more, err := l.up.cycle(context.Background())
		if err != nil {
			t.Fatalf("upload: %v", err)
		}
		if !more && l.up.settled() {
			return
		}
	}
	t.Fatal("upload did not settle")
}

func idem(seq int32, vals ...string) testBatch {
	b := testBatch{pid: 42, epoch: 0, seq: seq}
	for _, v := range vals {
		b.values = append(b.values, []byte(v))
	}
	return b
}

// With Ownership set every partition starts not owned: appends, reads and
// offsets answer ErrNotLeader until Acquire.
func TestNotOwnedRefusesUntilAcquire(t *testing.T) {
	c := newCluster(t)
	e, own := c.broker(1, nil)
	l := e.open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	if _, err := l.Append(context.Background(), p, idem(0, "a").encode()); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("append before acquire: %v, want ErrNotLeader", err)
	}
	if _, err := l.Read(context.Background(), p, 0, 1<<20, true); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("read before acquire: %v, want ErrNotLeader", err)
	}
	if _, _, _, err := l.OffsetForTime(context.Background(), p, TimestampLatest); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("list offsets before acquire: %v, want ErrNotLeader", err)
	}
	if _, err := l.DeleteRecords(context.Background(), p, 0); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("delete records before acquire: %v, want ErrNotLeader", err)
	}
	acquire(t, l, own, p)
	produce(t, l, p, idem(0, "a"))
	uploadAll(t, l)
	checkOwnedValues(t, l, p, []string{"a"})
}

// A zombie: its owner key moves to another broker after its object's PUT
// and before its commit. It commits nothing, its producers get
// ErrNotLeader, and the new owner continues from what was acknowledged,
// with the producer's dedupe state.
func TestZombieCommitsNothing(t *testing.T) {
	t.Run("memkv", func(t *testing.T) { runZombie(t, newCluster(t)) })
	t.Run("etcd", func(t *testing.T) { runZombie(t, newEtcdCluster(t)) })
}

func runZombie(t *testing.T, c *cluster) {
	var steal atomic.Pointer[func()]
	eA, ownA := c.broker(1, func(o *Options) {
		o.Durability = DurabilityObject
		o.AfterPut = func(string) {
			if f := steal.Swap(nil); f != nil {
				(*f)()
			}
		}
	})
	eB, ownB := c.broker(2, func(o *Options) { o.Durability = DurabilityObject })
	a := eA.open()
	p := createTopic(t, a, "t", 1, nil).Partition(0)
	acquire(t, a, ownA, p)
	acked := waitAsync(a, appendOK(t, a, p, idem(0, "a0", "a1")))
	uploadAll(t, a)
	if err := <-acked; err != nil {
		t.Fatalf("first batch: %v", err)
	}

	zombie := waitAsync(a, appendOK(t, a, p, idem(2, "z2")))
	stealFn := func() { ownB.take(t, p.topic.ID, p.index) }
	steal.Store(&stealFn)
	uploadAll(t, a) // PUT lands, the key moves, the commit is fenced out
	if err := <-zombie; !errors.Is(err, ErrNotLeader) {
		t.Fatalf("zombie's producer got %v, want ErrNotLeader", err)
	}
	if n := committedNext(t, eA.meta, p); n != 2 {
		t.Fatalf("committed next offset %d, want 2: the zombie committed", n)
	}
	if _, err := a.Append(context.Background(), p, idem(2, "z2").encode()); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("append on the zombie: %v, want ErrNotLeader", err)
	}
	if a.up.Pending() != 0 {
		t.Fatalf("zombie still holds %d pending bytes", a.up.Pending())
	}

	b := eB.open()
	pb, _ := b.TopicByID(p.topic.ID)
	if err := b.Acquire(context.Background(), p.topic.ID, 0); err != nil {
		t.Fatal(err)
	}
	q := pb.Partition(0)
	checkResend(t, b, q, idem(0, "a0", "a1"), 0, true) // acknowledged: its original offset
	res := appendOK(t, b, q, idem(2, "b2"))
	if res.BaseOffset != 2 || res.Duplicate {
		t.Fatalf("new owner's append %+v, want offset 2", res)
	}
	done := waitAsync(b, res)
	uploadAll(t, b)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	checkOwnedValues(t, b, q, []string{"a0", "a1", "b2"})
}

// Release waits for the batches already taken to commit; a second log
// that then Acquires continues at the right offset with the producers'
// dedupe state.
func TestReleaseHandsOver(t *testing.T) {
	for _, d := range []Durability{DurabilityWAL, DurabilityObject} {
		t.Run(durabilityName(d), func(t *testing.T) {
			c := newCluster(t)
			eA, ownA := c.broker(1, func(o *Options) { o.Durability = d })
			eB, ownB := c.broker(2, func(o *Options) { o.Durability = d })
			a := eA.open()
			p := createTopic(t, a, "t", 1, nil).Partition(0)
			acquire(t, a, ownA, p)
			var acks []<-chan error
			for i := range int32(4) {
				acks = append(acks, waitAsync(a, appendOK(t, a, p, idem(i, fmt.Sprint("v", i)))))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := a.Release(ctx, p.topic.ID, 0); err != nil { // kicks the uploader
				t.Fatalf("release: %v", err)
			}
			for i, ack := range acks {
				if err := <-ack; err != nil {
					t.Fatalf("batch %d: %v", i, err)
				}
			}
			if n := committedNext(t, eA.meta, p); n != 4 {
				t.Fatalf("committed next offset %d after release, want 4", n)
			}
			if _, err := a.Append(context.Background(), p, idem(4, "x").encode()); !errors.Is(err, ErrNotLeader) {
				t.Fatalf("append after release: %v, want ErrNotLeader", err)
			}

			b := eB.open()
			tb, _ := b.TopicByID(p.topic.ID)
			q := tb.Partition(0)
			acquire(t, b, ownB, q)
			checkResend(t, b, q, idem(3, "v3"), 3, true)
			res := appendOK(t, b, q, idem(4, "v4"))
			if res.BaseOffset != 4 {
				t.Fatalf("new owner's append at %d, want 4", res.BaseOffset)
			}
			done := waitAsync(b, res)
			uploadAll(t, b)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			checkOwnedValues(t, b, q, []string{"v0", "v1", "v2", "v3", "v4"})
		})
	}
}

// Drop under object durability drops the batches not yet committed (never
// acknowledged): their producers get ErrNotLeader, nothing stays pending,
// and the next owner starts at the committed end.
func TestDropObjectDurability(t *testing.T) {
	c := newCluster(t)
	eA, ownA := c.broker(1, func(o *Options) { o.Durability = DurabilityObject })
	a := eA.open()
	p := createTopic(t, a, "t", 1, nil).Partition(0)
	acquire(t, a, ownA, p)
	produceUploaded := waitAsync(a, appendOK(t, a, p, idem(0, "c0")))
	uploadAll(t, a)
	if err := <-produceUploaded; err != nil {
		t.Fatal(err)
	}
	pending := waitAsync(a, appendOK(t, a, p, idem(1, "d1")))
	ownA.lose(p.topic.ID, 0)
	a.Drop(p.topic.ID, 0)
	if err := <-pending; !errors.Is(err, ErrNotLeader) {
		t.Fatalf("dropped batch's producer got %v, want ErrNotLeader", err)
	}
	// Drop takes the batches out at once, or, while an uploader step
	// runs (the uploader's loop runs steps of its own), at the next
	// step, which uploadAll runs.
	uploadAll(t, a)
	if a.up.Pending() != 0 {
		t.Fatalf("%d bytes still pending after drop", a.up.Pending())
	}
	var m dto.Metric
	if err := a.m.droppedBatches.Write(&m); err != nil || m.GetCounter().GetValue() != 1 {
		t.Fatalf("dropped batches counted %v (err %v), want 1", m.GetCounter().GetValue(), err)
	}
	if n := committedNext(t, eA.meta, p); n != 1 {
		t.Fatalf("committed next offset %d, want 1", n)
	}
	acquire(t, a, ownA, p) // owned again: from the committed end
	if res := appendOK(t, a, p, idem(1, "e1")); res.BaseOffset != 1 || res.Duplicate {
		t.Fatalf("append after re-acquire: %+v, want offset 1", res)
	}
}

// Under wal durability a reopened log keeps the WAL batches of a partition
// it does not own yet (acknowledged at the fsync): it uploads and serves
// none of them and never releases their WAL frames (a second crash still
// finds them), then commits them after Acquire. Drop keeps them too.
func TestWALBatchesWaitForOwnership(t *testing.T) {
	c := newCluster(t)
	eA, ownA := c.broker(1, nil)
	a := eA.open()
	p := createTopic(t, a, "t", 1, nil).Partition(0)
	acquire(t, a, ownA, p)
	produce(t, a, p, idem(0, "w0"))
	produce(t, a, p, idem(1, "w1"))
	reopen := func() {
		eA.crash(a, false)
		a = c.reopen(eA)
		tp, _ := a.Topic("t")
		p = tp.Partition(0)
	}
	reopen()
	uploadOwned(t, a)
	if n := committedNext(t, eA.meta, p); n != 0 {
		t.Fatalf("committed %d before acquire, want nothing", n)
	}
	if _, err := a.Read(context.Background(), p, 0, 1<<20, true); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("read before acquire: %v, want ErrNotLeader", err)
	}
	reopen() // the WAL still holds them
	acquire(t, a, ownA, p)
	produce(t, a, p, idem(2, "w2"))
	ownA.lose(p.topic.ID, 0)
	a.Drop(p.topic.ID, 0) // kept, not committed
	uploadOwned(t, a)
	if n := committedNext(t, eA.meta, p); n != 0 {
		t.Fatalf("committed %d while dropped, want nothing", n)
	}
	reopen()
	acquire(t, a, ownA, p)
	uploadOwned(t, a)
	if n := committedNext(t, eA.meta, p); n != 3 {
		t.Fatalf("committed next offset %d after acquire, want 3", n)
	}
	checkOwnedValues(t, a, p, []string{"w0", "w1", "w2"})
	checkResend(t, a, p, idem(1, "w1"), 1, true)
}

// Kept WAL batches that no longer continue the committed log (another
// owner wrote meanwhile: a forced takeover) are reset at Acquire, never
// committed on top of it.
func TestKeptBatchesResetOnGap(t *testing.T) {
	c := newCluster(t)
	eA, ownA := c.broker(1, nil)
	eB, ownB := c.broker(2, nil)
	a := eA.open()
	p := createTopic(t, a, "t", 1, nil).Partition(0)
	acquire(t, a, ownA, p)
	produce(t, a, p, idem(0, "lost"))
	ownA.lose(p.topic.ID, 0)
	a.Drop(p.topic.ID, 0)

	b := eB.open()
	tb, _ := b.Topic("t")
	q := tb.Partition(0)
	acquire(t, b, ownB, q)
	produce(t, b, q, testBatch{values: [][]byte{[]byte("b0"), []byte("b1")}})
	uploadAll(t, b)
	if err := b.Release(context.Background(), q.topic.ID, 0); err != nil {
		t.Fatal(err)
	}

	acquire(t, a, ownA, p)
	uploadAll(t, a)
	if n := committedNext(t, eA.meta, p); n != 2 {
		t.Fatalf("committed next offset %d, want 2 (B's log)", n)
	}
	checkOwnedValues(t, a, p, []string{"b0", "b1"})
	produce(t, a, p, idem(0, "a2")) // a new producer session after the reset
	eA.crash(a, false)              // the reset batch's frame must not come back
	a = c.reopen(eA)
	tp, _ := a.Topic("t")
	p = tp.Partition(0)
	acquire(t, a, ownA, p)
	uploadAll(t, a)
	checkOwnedValues(t, a, p, []string{"b0", "b1", "a2"})
}

// Past the local lease deadline (Valid false) the log acknowledges
// nothing: an append whose ack waits fails with ErrNotLeader, and appends
// and reads are refused.
func TestInvalidLeaseStopsAcks(t *testing.T) {
	for _, d := range []Durability{DurabilityWAL, DurabilityObject} {
		t.Run(durabilityName(d), func(t *testing.T) {
			c := newCluster(t)
			e, own := c.broker(1, func(o *Options) { o.Durability = d })
			l := e.open()
			p := createTopic(t, l, "t", 1, nil).Partition(0)
			acquire(t, l, own, p)
			res := appendOK(t, l, p, idem(0, "late"))
			own.valid.Store(false)
			done := waitAsync(l, res)
			if d == DurabilityObject {
				uploadAll(t, l)
			}
			if err := <-done; !errors.Is(err, ErrNotLeader) {
				t.Fatalf("ack past the deadline: %v, want ErrNotLeader", err)
			}
			if _, err := l.Append(context.Background(), p, idem(1, "x").encode()); !errors.Is(err, ErrNotLeader) {
				t.Fatalf("append past the deadline: %v, want ErrNotLeader", err)
			}
			if _, err := l.Read(context.Background(), p, 0, 1<<20, true); !errors.Is(err, ErrNotLeader) {
				t.Fatalf("read past the deadline: %v, want ErrNotLeader", err)
			}
			own.valid.Store(true)
			checkResend(t, l, p, idem(0, "late"), 0, true) // the retry finds it
		})
	}
}

// SyncTopics takes topics another broker created and deleted, including a
// topic deleted and created again under the same name (a new id).
func TestSyncTopics(t *testing.T) {
	c := newCluster(t)
	eA, _ := c.broker(1, nil)
	eB, _ := c.broker(2, nil)
	a, b := eA.open(), eB.open()
	createTopic(t, b, "new", 2, nil)
	old := createTopic(t, b, "again", 1, nil)
	if err := a.SyncTopics(context.Background()); err != nil {
		t.Fatal(err)
	}
	stale, ok := a.Topic("again")
	if !ok || stale.ID != old.ID {
		t.Fatalf("topic again not synced")
	}
	if tp, ok := a.Topic("new"); !ok || len(tp.Partitions()) != 2 {
		t.Fatalf("topic new not synced")
	}
	if err := b.DeleteTopic(context.Background(), "again"); err != nil {
		t.Fatal(err)
	}
	fresh := createTopic(t, b, "again", 3, nil)
	if err := b.DeleteTopic(context.Background(), "new"); err != nil {
		t.Fatal(err)
	}
	if err := a.SyncTopics(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.Topic("new"); ok {
		t.Fatal("deleted topic still there")
	}
	got, ok := a.Topic("again")
	if !ok || got.ID != fresh.ID || len(got.Partitions()) != 3 {
		t.Fatalf("re-created topic: ok=%v", ok)
	}
	if _, ok := a.TopicByID(old.ID); ok {
		t.Fatal("the old topic's id is still known")
	}
	if _, err := a.Append(context.Background(), stale.Partition(0), idem(0, "x").encode()); !errors.Is(err, ErrUnknownPartition) {
		t.Fatalf("append to the old topic: %v, want ErrUnknownPartition", err)
	}
	if err := a.SyncTopics(context.Background()); err != nil { // idempotent
		t.Fatal(err)
	}
	if again, _ := a.Topic("again"); again != got {
		t.Fatal("a second sync replaced an unchanged topic")
	}
}

// A broker whose owner key moved but that was not told yet (no Drop) runs
// no retention, DeleteRecords or producer fold on the partition: each of
// their metadata writes carries its stale fence and fails.
func TestStaleOwnerMaintainsNothing(t *testing.T) {
	c := newCluster(t)
	eA, ownA := c.broker(1, nil)
	_, ownB := c.broker(2, nil)
	a := eA.open()
	p := createTopic(t, a, "t", 1, map[string]string{"retention.ms": "60000"}).Partition(0)
	acquire(t, a, ownA, p)
	for i := range int32(foldMinDeltas + 1) {
		produce(t, a, p, testBatch{pid: 42, seq: i, values: [][]byte{[]byte("x")}, firstTS: 1000})
		uploadAll(t, a)
	}
	ownB.take(t, p.topic.ID, 0) // A still believes it owns the partition
	if _, err := a.DeleteRecords(context.Background(), p, 3); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("delete records by a stale owner: %v, want ErrNotLeader", err)
	}
	a.MaintainOnce(context.Background(), false)
	st, _, err := eA.meta.PartitionState(context.Background(), p.topic.ID, 0)
	if err != nil || st.LogStartOffset != 0 {
		t.Fatalf("log start %d (err %v): a stale owner moved it", st.LogStartOffset, err)
	}
	if segs, _ := eA.meta.Segments(context.Background(), p.topic.ID, 0, 0, 0); len(segs) != foldMinDeltas+1 {
		t.Fatalf("%d segments, want %d: a stale owner's retention deleted some", len(segs), foldMinDeltas+1)
	}
	if head, ok, _ := c.shared.Get(context.Background(), fmt.Sprintf("producers/%s/%010d/head", p.topic.ID, 0)); ok {
		t.Fatalf("a stale owner folded producer deltas: head %s", head.Value)
	}
}

// The bucket-wide work (garbage collection) runs only on the broker that
// sweeps.
func TestOnlyTheSweeperCollectsGarbage(t *testing.T) {
	c := newCluster(t)
	e, own := c.broker(1, nil)
	l := e.open()
	ctx := context.Background()
	if _, err := c.store.Put(ctx, "data/garbage.obj", []byte("x"), objectstore.Condition{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	if err := e.meta.MarkGarbage(ctx, "data/garbage.obj", 0); err != nil {
		t.Fatal(err)
	}
	l.MaintainOnce(ctx, true)
	if keys := storeKeys(t, c.store, uploadPrefix); len(keys) != 1 {
		t.Fatalf("a broker that does not sweep collected garbage: %v left", keys)
	}
	own.sweeps.Store(true)
	l.MaintainOnce(ctx, true)
	if keys := storeKeys(t, c.store, uploadPrefix); len(keys) != 0 {
		t.Fatalf("the sweeper left garbage: %v", keys)
	}
}

// A broker restarted after a forced takeover finds WAL batches that no
// longer continue the partition's log: it starts, skips them, and commits
// nothing of them on top of the new owner's log.
func TestReopenAfterTakeover(t *testing.T) {
	c := newCluster(t)
	eA, ownA := c.broker(1, nil)
	eB, ownB := c.broker(2, nil)
	a := eA.open()
	p := createTopic(t, a, "t", 1, nil).Partition(0)
	acquire(t, a, ownA, p)
	produce(t, a, p, testBatch{values: [][]byte{[]byte("a0"), []byte("a1")}})
	produce(t, a, p, testBatch{values: [][]byte{[]byte("a2")}})
	eA.crash(a, false)

	b := eB.open()
	tb, _ := b.Topic("t")
	q := tb.Partition(0)
	acquire(t, b, ownB, q) // takeover: A's acknowledged batches are lost
	produce(t, b, q, testBatch{values: [][]byte{[]byte("b0")}})
	uploadAll(t, b)
	if err := b.Release(context.Background(), q.topic.ID, 0); err != nil {
		t.Fatal(err)
	}

	a = c.reopen(eA) // a0..a1 start below B's end, a2 beyond it: both skipped
	tp, _ := a.Topic("t")
	p = tp.Partition(0)
	acquire(t, a, ownA, p)
	uploadAll(t, a)
	checkOwnedValues(t, a, p, []string{"b0"})
}

// Acquire of a partition already owned (a new fence) takes its batches
// out of the objects cut under the old fence; they commit once, under the
// new one.
func TestReacquireRetakesInFlightBatches(t *testing.T) {
	c := newCluster(t)
	e, own := c.broker(1, nil)
	l := e.open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	acquire(t, l, own, p)
	produce(t, l, p, idem(0, "r0"))
	l.up.step.Lock()
	started, err := l.up.cut(context.Background())
	f := l.up.queue[0]
	l.up.step.Unlock()
	if !started || err != nil {
		t.Fatalf("cut: started=%v err=%v", started, err)
	}
	<-f.done
	acquire(t, l, own, p) // the owner key is rewritten: the cut's fence is stale
	uploadAll(t, l)
	if n := committedNext(t, e.meta, p); n != 1 {
		t.Fatalf("committed next offset %d, want 1", n)
	}
	produce(t, l, p, idem(1, "r1"))
	uploadAll(t, l)
	checkOwnedValues(t, l, p, []string{"r0", "r1"})
}

// Drop answers at once even while the uploader is inside a step (a commit
// to an unreachable metadata store): the producers waiting under object
// durability get ErrNotLeader now, and the uploader takes the batches out
// at its next step.
func TestDropWhileUploaderBusy(t *testing.T) {
	c := newCluster(t)
	e, own := c.broker(1, func(o *Options) { o.Durability = DurabilityObject })
	l := e.open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	acquire(t, l, own, p)
	waiting := waitAsync(l, appendOK(t, l, p, idem(0, "d0")))
	l.up.step.Lock() // a step that does not end
	own.lose(p.topic.ID, 0)
	l.Drop(p.topic.ID, 0)
	if err := <-waiting; !errors.Is(err, ErrNotLeader) {
		l.up.step.Unlock()
		t.Fatalf("waiting producer got %v, want ErrNotLeader", err)
	}
	l.up.step.Unlock()
	uploadAll(t, l) // applies the drop: nothing pending, nothing committed
	if n := committedNext(t, e.meta, p); n != 0 {
		t.Fatalf("committed next offset %d, want 0", n)
	}
}

// A Release interrupted by a Drop (the lease expired during the hand-over)
// reports it: nothing was handed over.
func TestReleaseInterruptedByDrop(t *testing.T) {
	c := newCluster(t)
	e, own := c.broker(1, func(o *Options) { o.Durability = DurabilityObject })
	l := e.open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	acquire(t, l, own, p)
	appendOK(t, l, p, idem(0, "r0"))
	l.up.step.Lock() // no upload: the release waits
	released := make(chan error, 1)
	go func() { released <- l.Release(context.Background(), p.topic.ID, 0) }()
	if !testwait.Poll(10*time.Second, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.releasing
	}) {
		l.up.step.Unlock()
		t.Fatal("release did not start")
	}
	own.lose(p.topic.ID, 0)
	l.Drop(p.topic.ID, 0)
	l.up.step.Unlock()
	if err := <-released; !errors.Is(err, ErrNotLeader) {
		t.Fatalf("release interrupted by a drop: %v, want ErrNotLeader", err)
	}
}

// A reopened log rebuilds the producer state of a partition whose WAL
// holds batches as the committed state with those batches applied: after
// Acquire a retry of a committed batch and of a kept one both get their
// original offsets, and the next sequence continues.
func TestReopenedProducerStateWithKeptBatches(t *testing.T) {
	c := newCluster(t)
	e, own := c.broker(1, nil)
	l := e.open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	acquire(t, l, own, p)
	produce(t, l, p, idem(0, "c0"))
	uploadAll(t, l)
	produce(t, l, p, idem(1, "k1"))
	e.crash(l, false)

	l = c.reopen(e)
	tp, _ := l.Topic("t")
	p = tp.Partition(0)
	acquire(t, l, own, p)
	checkResend(t, l, p, idem(0, "c0"), 0, true)
	checkResend(t, l, p, idem(1, "k1"), 1, true)
	checkResend(t, l, p, idem(2, "n2"), 2, false)
	uploadAll(t, l)
	checkOwnedValues(t, l, p, []string{"c0", "k1", "n2"})
}

// A Release whose batches cannot commit before its context ends fails;
// the caller then drops the partition, whose waiting producers get
// ErrNotLeader.
func TestReleaseTimesOutThenDrop(t *testing.T) {
	c := newCluster(t)
	e, own := c.broker(1, func(o *Options) { o.Durability = DurabilityObject })
	l := e.open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	acquire(t, l, own, p)
	waiting := waitAsync(l, appendOK(t, l, p, idem(0, "r0")))
	l.up.step.Lock() // the commit cannot happen
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := l.Release(ctx, p.topic.ID, 0)
	if !errors.Is(err, context.Canceled) {
		l.up.step.Unlock()
		t.Fatalf("release with its context ended: %v, want context.Canceled", err)
	}
	if _, err := l.Append(context.Background(), p, idem(1, "r1").encode()); !errors.Is(err, ErrNotLeader) {
		l.up.step.Unlock()
		t.Fatalf("append during a failed release: %v, want ErrNotLeader", err)
	}
	own.lose(p.topic.ID, 0)
	l.Drop(p.topic.ID, 0)
	l.up.step.Unlock()
	if err := <-waiting; !errors.Is(err, ErrNotLeader) {
		t.Fatalf("waiting producer got %v, want ErrNotLeader", err)
	}
	uploadAll(t, l)
	if n := committedNext(t, e.meta, p); n != 0 {
		t.Fatalf("committed next offset %d, want 0", n)
	}
}
