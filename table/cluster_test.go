package table

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	icebergcatalog "github.com/apache/iceberg-go/catalog"
	itable "github.com/apache/iceberg-go/table"

	"github.com/sediment-io/sediment/internal/testwait"
	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/objectstore/mem"
	"github.com/sediment-io/sediment/storage/partition"
	"github.com/sediment-io/sediment/storage/record"
	"github.com/sediment-io/sediment/table/catalog"
)

const waitLimit = 60 * time.Second

// fakeSlot is the cluster as one broker's converter sees it: the fence of
// the table slot it holds, or none. A zombie is a broker whose slot moved
// while its fakeSlot still says it holds it.
type fakeSlot struct {
	mu    sync.Mutex
	fence metadata.Cond
	held  bool
}

func (f *fakeSlot) set(version int64, held bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fence, f.held = metadata.Cond{Key: "own/tables/x", Version: version}, held
}

func (f *fakeSlot) TableFence(metadata.TopicID) (metadata.Cond, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fence, f.held
}

// tableEnv is one partition log with a table topic, and the shared SQLite
// catalog every converter of the test opens on its own, as brokers on one
// machine would.
type tableEnv struct {
	t     *testing.T
	dir   string
	log   *partition.Log
	topic *partition.Topic
	seq   int64
}

func newTableEnv(t *testing.T) *tableEnv {
	dir := t.TempDir()
	kv, err := metadata.OpenBolt(dir + "/meta.db")
	if err != nil {
		t.Fatal(err)
	}
	meta := metadata.NewStore(kv)
	store := mem.New()
	log, err := partition.Open(context.Background(), partition.Options{Meta: meta, Store: store, WALDir: dir + "/wal",
		Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		log.Close()
		store.Close()
		meta.Close()
	})
	topic, err := log.CreateTopic(context.Background(), "events", 2, map[string]string{
		"sediment.table.enable": "true", "sediment.table.format": "raw", "sediment.table.commit.bytes": "1",
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	return &tableEnv{t: t, dir: dir, log: log, topic: topic}
}

func testLogger() *slog.Logger {
	if os.Getenv("SEDIMENT_TEST_DEBUG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// converter starts a converter of its own catalog on the shared file, as
// one broker; cluster nil is one node.
func (e *tableEnv) converter(cluster Fencer, beforeCommit func(string)) (*Converter, icebergcatalog.Catalog) {
	return e.converterPolling(cluster, beforeCommit, 20*time.Millisecond)
}

// converterPolling is converter with the supervisor's PollInterval: a
// long one keeps it from stopping a worker whose slot is lost before the
// worker's own fence check does.
func (e *tableEnv) converterPolling(cluster Fencer, beforeCommit func(string), poll time.Duration) (*Converter, icebergcatalog.Catalog) {
	cat, err := catalog.Open(context.Background(), "", catalog.Options{DataDir: e.dir})
	if err != nil {
		e.t.Fatal(err)
	}
	c := Start(Options{Log: e.log, Catalog: cat, Logger: testLogger(), PollInterval: poll,
		RetryInterval: 20 * time.Millisecond, OrphanGrace: -1, Cluster: cluster, BeforeCommit: beforeCommit})
	e.t.Cleanup(func() {
		c.Close()
		closeCatalog(cat)
	})
	return c, cat
}

func closeCatalog(cat icebergcatalog.Catalog) {
	if c, ok := cat.(interface{ Close() error }); ok {
		c.Close()
	}
}

// produce appends n records to each partition.
func (e *tableEnv) produce(n int) {
	e.t.Helper()
	for _, p := range e.topic.Partitions() {
		var recs []record.Record
		for range n {
			e.seq++
			recs = append(recs, record.Record{Timestamp: time.Now().UnixMilli(), Value: fmt.Appendf(nil, "v%d", e.seq)})
		}
		if _, err := e.log.Append(context.Background(), p, record.EncodeBatch(recs)); err != nil {
			e.t.Fatal(err)
		}
	}
}

// offsets reads the table's committed next offsets (nil: no table yet).
func (e *tableEnv) offsets(cat icebergcatalog.Catalog) map[int32]int64 {
	tbl, err := cat.LoadTable(context.Background(), itable.Identifier{Namespace, "events"})
	if err != nil {
		return nil
	}
	return offsetsOf(tbl)
}

func (e *tableEnv) waitOffsets(cat icebergcatalog.Catalog, want int64, what string) {
	e.t.Helper()
	waitFor(e.t, what, func() bool {
		got := e.offsets(cat)
		return got[0] == want && got[1] == want
	})
}

// checkRows fails unless the table holds every offset below want of each
// partition exactly once.
func (e *tableEnv) checkRows(cat icebergcatalog.Catalog, want int64) {
	e.t.Helper()
	e.checkRowsOf(cat, map[int64]int64{0: want, 1: want})
}

// checkRowsOf fails unless the table holds every offset below want[p] of
// each partition p exactly once, and nothing else.
func (e *tableEnv) checkRowsOf(cat icebergcatalog.Catalog, want map[int64]int64) {
	e.t.Helper()
	seen := e.rows(cat)
	total := int64(0)
	for p, end := range want {
		total += end
		for o := range end {
			if n := seen[[2]int64{p, o}]; n != 1 {
				e.t.Errorf("partition %d offset %d: %d rows, want 1", p, o, n)
			}
		}
	}
	if len(seen) != int(total) {
		e.t.Errorf("%d distinct rows, want %d", len(seen), total)
	}
}

// rows counts the table's rows by (partition, offset).
func (e *tableEnv) rows(cat icebergcatalog.Catalog) map[[2]int64]int {
	e.t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, itable.Identifier{Namespace, "events"})
	if err != nil {
		e.t.Fatal(err)
	}
	at, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	defer at.Release()
	seen := map[[2]int64]int{}
	rdr := array.NewTableReader(at, 1024)
	defer rdr.Release()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		sc := rec.Schema()
		pi, oi := sc.FieldIndices("_kafka_partition"), sc.FieldIndices("_kafka_offset")
		parts, offs := rec.Column(pi[0]).(*array.Int32), rec.Column(oi[0]).(*array.Int64)
		for i := range int(rec.NumRows()) {
			seen[[2]int64{int64(parts.Value(i)), offs.Value(i)}]++
		}
	}
	return seen
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, waitLimit, cond, "not within %v: %s", waitLimit, what)
}

func stateOf(c *Converter) string {
	st, ok := c.Status("events")
	if !ok {
		return ""
	}
	return st.State + ": " + st.Error
}

// gate blocks a converter's next commit once armed, between its Parquet
// write and its catalog commit, until opened.
type gate struct {
	mu      sync.Mutex
	armed   bool
	reached chan struct{}
	open    chan struct{}
}

func newGate() *gate { return &gate{reached: make(chan struct{}), open: make(chan struct{})} }

func (g *gate) arm() {
	g.mu.Lock()
	g.armed = true
	g.mu.Unlock()
}

func (g *gate) hook(string) {
	g.mu.Lock()
	armed := g.armed
	g.armed = false
	g.mu.Unlock()
	if armed {
		close(g.reached)
		<-g.open
	}
}

func (g *gate) waitReached(t *testing.T) {
	select {
	case <-g.reached:
	case <-time.After(waitLimit):
		t.Fatal("the converter never reached its commit")
	}
}

// TestConvertsOnlyHeldTables: in a cluster a converter converts a table
// topic only once its slot is acquired, and stops when it is released.
func TestConvertsOnlyHeldTables(t *testing.T) {
	e := newTableEnv(t)
	slot := &fakeSlot{}
	slot.set(7, true)
	c, cat := e.converter(slot, nil)
	e.produce(3)
	// Not acquired: the supervisor passes and starts nothing.
	for range 5 {
		c.reconcile(context.Background())
	}
	if _, ok := c.Status("events"); ok || e.offsets(cat) != nil {
		t.Fatalf("a table converted without its slot: %q %v", stateOf(c), e.offsets(cat))
	}
	if err := c.AcquireTable(context.Background(), e.topic.ID); err != nil {
		t.Fatal(err)
	}
	e.waitOffsets(cat, 3, "the acquired table is converted")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := c.ReleaseTable(ctx, e.topic.ID); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	running := len(c.workers)
	c.mu.Unlock()
	if running != 0 {
		t.Fatalf("%d workers after the release", running)
	}
	e.produce(2)
	for range 5 {
		c.reconcile(context.Background())
	}
	c.mu.Lock()
	running = len(c.workers)
	c.mu.Unlock()
	if running != 0 || e.offsets(cat)[0] != 3 {
		t.Fatalf("converting after the release: %d workers, offsets %v", running, e.offsets(cat))
	}
	e.checkRows(cat, 3)
}

// TestZombieCommitRefusedByFence: a converter whose slot was lost after it
// wrote its Parquet files commits nothing: the fence check before the
// catalog commit stops it, and the next owner converts those records once.
func TestZombieCommitRefusedByFence(t *testing.T) {
	e := newTableEnv(t)
	g := newGate()
	slotA, slotB := &fakeSlot{}, &fakeSlot{}
	slotA.set(10, true)
	a, cat := e.converterPolling(slotA, g.hook, time.Hour)
	if err := a.AcquireTable(context.Background(), e.topic.ID); err != nil {
		t.Fatal(err)
	}
	e.produce(5)
	e.waitOffsets(cat, 5, "A converts")
	g.arm()
	e.produce(5)
	g.waitReached(t)
	slotA.set(10, false) // A's lease ended while it wrote
	close(g.open)
	waitFor(t, "A stops on its fence check", func() bool { return stateOf(a) == "stopped: "+errNotOwner.Error() })
	if got := e.offsets(cat); got[0] != 5 || got[1] != 5 {
		t.Fatalf("the zombie committed: %v", got)
	}
	slotB.set(20, true)
	b, _ := e.converter(slotB, nil)
	if err := b.AcquireTable(context.Background(), e.topic.ID); err != nil {
		t.Fatal(err)
	}
	e.waitOffsets(cat, 10, "B converts what A could not commit")
	a.DropTable(e.topic.ID)
	e.checkRows(cat, 10)
}

// TestZombieCommitRefusedByCatalog: a zombie that passed its fence check
// (its lease ran out between the check and the commit, or its clock was
// wrong) and commits after the new owner committed is refused by the
// catalog (the snapshot it builds on is no longer current); it resumes
// from the new owner's offsets, and no record is in the table twice.
func TestZombieCommitRefusedByCatalog(t *testing.T) {
	e := newTableEnv(t)
	g := newGate()
	slotA, slotB := &fakeSlot{}, &fakeSlot{}
	slotA.set(10, true)
	a, cat := e.converter(slotA, g.hook)
	if err := a.AcquireTable(context.Background(), e.topic.ID); err != nil {
		t.Fatal(err)
	}
	e.produce(5)
	e.waitOffsets(cat, 5, "A converts")
	g.arm()
	e.produce(5)
	g.waitReached(t)
	// The slot moves to B while A is paused before its catalog commit;
	// A's own view still says it holds it.
	slotB.set(20, true)
	b, _ := e.converter(slotB, nil)
	if err := b.AcquireTable(context.Background(), e.topic.ID); err != nil {
		t.Fatal(err)
	}
	e.waitOffsets(cat, 10, "B converts the same records")
	close(g.open)
	e.produce(5)
	e.waitOffsets(cat, 15, "the converters go on")
	slotA.set(10, false)
	a.DropTable(e.topic.ID)
	e.produce(5)
	e.waitOffsets(cat, 20, "B converts on")
	e.checkRows(cat, 20)
}

// TestReleaseWaitsForCommitInFlight: a graceful release lets the commit in
// flight land before the worker stops, so the next owner starts after it.
func TestReleaseWaitsForCommitInFlight(t *testing.T) {
	e := newTableEnv(t)
	g := newGate()
	slot := &fakeSlot{}
	slot.set(10, true)
	c, cat := e.converterPolling(slot, g.hook, time.Hour)
	if err := c.AcquireTable(context.Background(), e.topic.ID); err != nil {
		t.Fatal(err)
	}
	e.produce(5)
	e.waitOffsets(cat, 5, "converts")
	g.arm()
	e.produce(5)
	g.waitReached(t)
	released := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		released <- c.ReleaseTable(ctx, e.topic.ID)
	}()
	close(g.open)
	select {
	case err := <-released:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitLimit):
		t.Fatal("the release never returned")
	}
	// The commit in flight was partition 0's (commit.bytes=1 commits each
	// batch); the release stopped the worker before partition 1's.
	if got := e.offsets(cat); got[0] != 10 || got[1] != 5 {
		t.Fatalf("offsets after the release: %v, want the commit in flight (0:10) and no later one (1:5)", got)
	}
	e.checkRowsOf(cat, map[int64]int64{0: 10, 1: 5})
}
