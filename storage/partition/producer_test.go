package partition

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sediment-io/sediment/metadata"
)

// restart closes l cleanly and opens a new Log on the same environment.
func restart(t *testing.T, e *logEnv, l *Log) *Log {
	t.Helper()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	e.meta.Close()
	e.meta = nil
	return e.open()
}

// wantDuplicate sends tb again and expects it answered as a duplicate at
// offset want.
func wantDuplicate(t *testing.T, l *Log, p *Partition, tb testBatch, want int64) {
	t.Helper()
	res, err := l.Append(context.Background(), p, tb.encode())
	if err != nil || !res.Duplicate || res.BaseOffset != want {
		t.Fatalf("retry of producer %d seq %d: duplicate=%v offset %d err=%v, want the original offset %d",
			tb.pid, tb.seq, res.Duplicate, res.BaseOffset, err, want)
	}
}

// TestProducerStateSurvivesRestartAndFold: a retried batch is answered with
// its original offset after a restart that rebuilds producer state from
// the committed deltas, and again after compaction folded the deltas into
// a snapshot and removed them.
func TestProducerStateSurvivesRestartAndFold(t *testing.T) {
	ctx := context.Background()
	e := newLogEnv(t, nil)
	l := e.open()
	tp := createTopic(t, l, "t", 1, nil)
	batch := func(i int) testBatch { return testBatch{values: values(2, "a"), pid: 7, seq: int32(2 * i)} }
	single := func(i int) testBatch { return testBatch{values: values(1, "b"), pid: int64(100 + i)} }
	const uploads = 2 * foldMinDeltas
	var offsets, singles []int64
	for i := range uploads { // one delta per upload
		offsets = append(offsets, produce(t, l, tp.Partition(0), batch(i)).BaseOffset)
		singles = append(singles, produce(t, l, tp.Partition(0), single(i)).BaseOffset)
		uploadAll(t, l)
	}
	check := func(l *Log) {
		t.Helper()
		p := l.topics["t"].Partition(0)
		for i := uploads - metadata.ProducerWindow; i < uploads; i++ {
			wantDuplicate(t, l, p, batch(i), offsets[i])
		}
		for _, i := range []int{0, uploads / 2, uploads - 1} { // producers seen in one segment only
			wantDuplicate(t, l, p, single(i), singles[i])
		}
		if _, err := l.Append(ctx, p, testBatch{values: values(1, "c"), pid: 7, seq: 2*uploads + 5}.encode()); !errors.Is(err, ErrOutOfOrderSequence) {
			t.Fatalf("sequence gap after reload: %v", err)
		}
	}
	l = restart(t, e, l)
	check(l)

	l.MaintainOnce(ctx, false) // compaction folds the deltas into a snapshot
	if n, err := e.meta.FoldProducers(ctx, tp.ID, 0, 1, 0); err != nil || n != 0 {
		t.Fatalf("%d deltas left after the maintenance pass (err %v), want all folded", n, err)
	}
	l = restart(t, e, l)
	check(l)
	// More commits after the fold, then a second fold over the snapshot.
	p := l.topics["t"].Partition(0)
	next := produce(t, l, p, batch(uploads)).BaseOffset
	uploadAll(t, l)
	if n, err := e.meta.FoldProducers(ctx, tp.ID, 0, 1, 0); err != nil || n != 1 {
		t.Fatalf("second fold: %d deltas, err %v", n, err)
	}
	l = restart(t, e, l)
	wantDuplicate(t, l, l.topics["t"].Partition(0), batch(uploads), next)
	wantDuplicate(t, l, l.topics["t"].Partition(0), single(0), singles[0])
}

// bytesKV counts the bytes of every value written through it.
type bytesKV struct {
	metadata.KV
	written atomic.Int64
}

func (k *bytesKV) Txn(ctx context.Context, conds []metadata.Cond, ops []metadata.Op) (int64, error) {
	for _, op := range ops {
		k.written.Add(int64(len(op.Key) + len(op.Value)))
	}
	return k.KV.Txn(ctx, conds, ops)
}

// TestCommitWritesOnlyChangedProducers: with thousands of producers known
// to a partition, a commit holding one producer's batch writes a few
// hundred bytes of metadata, not the partition's whole producer table.
func TestCommitWritesOnlyChangedProducers(t *testing.T) {
	counter := &bytesKV{}
	e := newLogEnv(t, nil)
	e.wrapKV = func(kv metadata.KV) metadata.KV { counter.KV = kv; return counter }
	l := e.open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	const producers = 3000
	for i := range producers {
		produce(t, l, p, testBatch{values: values(1, "a"), pid: int64(1000 + i)})
	}
	uploadAll(t, l)
	for i := range 3 {
		produce(t, l, p, testBatch{values: values(1, "b"), pid: 1000, seq: int32(1 + i)})
		before := counter.written.Load()
		uploadAll(t, l)
		if n := counter.written.Load() - before; n > 2048 {
			t.Fatalf("commit %d of one producer's batch wrote %d bytes of metadata with %d producers known", i, n, producers)
		}
	}
}

// TestProducerExpiresOnBrokerClock: producer.id.expiration.ms counts on
// the broker's clock, whatever timestamps the producer puts in its
// batches, takes effect when altered, and survives a restart; a producer
// it expired is then one the broker has no state for.
func TestProducerExpiresOnBrokerClock(t *testing.T) {
	ctx := context.Background()
	var clock atomic.Int64
	clock.Store(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	advance := func(d time.Duration) { clock.Add(d.Milliseconds()) }
	e := newLogEnv(t, func(o *Options) { o.Now = func() time.Time { return time.UnixMilli(clock.Load()) } })
	l := e.open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	ancient := testBatch{values: values(1, "a"), pid: 7, firstTS: 1}                          // 1970
	future := testBatch{values: values(1, "b"), pid: 8, firstTS: 4102444800000}               // 2100
	recent := testBatch{values: values(1, "c"), pid: 9, firstTS: clock.Load() - 1000, seq: 0} // now
	first := produce(t, l, p, ancient).BaseOffset
	produce(t, l, p, future)
	produce(t, l, p, recent)

	advance(23 * time.Hour) // within the default of 24 h, whatever the batches say
	wantDuplicate(t, l, p, ancient, first)
	for _, bad := range []string{"0", "-5", "soon"} {
		err := l.BrokerConfig().Set(ctx, func(m map[string]string) (map[string]string, error) {
			m["producer.id.expiration.ms"] = bad
			return m, nil
		}, false)
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "producer.id.expiration.ms") {
			t.Fatalf("producer.id.expiration.ms=%s: %v", bad, err)
		}
	}
	setExpiration(t, l, "3600000")
	// Producer 7 was last seen 23 h ago: forgotten, so its old batch is
	// new to the broker, and so is a sequence that would be a gap.
	res, err := l.Append(ctx, p, ancient.encode())
	if err != nil || res.Duplicate {
		t.Fatalf("retry of an expired producer's batch: duplicate=%v err=%v, want appended", res.Duplicate, err)
	}
	if _, err := l.Append(ctx, p, testBatch{values: values(1, "d"), pid: 8, seq: 40}.encode()); err != nil {
		t.Fatalf("expired producer at sequence 40: %v", err)
	}
	// Producer 9, seen within the hour, is kept across a restart and
	// expired by one after the hour.
	advance(-23 * time.Hour)
	setExpiration(t, l, "86400000")
	uploadAll(t, l)
	l = restart(t, e, l)
	wantDuplicate(t, l, l.topics["t"].Partition(0), recent, 2)
	// Producer 8 resumed at sequence 40 after it was forgotten: rebuilt
	// from metadata, its state starts there, as the live state did.
	if _, err := l.Append(ctx, l.topics["t"].Partition(0), future.encode()); !errors.Is(err, ErrOutOfOrderSequence) {
		t.Fatalf("retry of producer 8's batch from before it was forgotten, after a restart: %v", err)
	}
	setExpiration(t, l, "3600000")
	uploadAll(t, l)
	advance(2 * time.Hour)
	l = restart(t, e, l)
	if _, err := l.Append(ctx, l.topics["t"].Partition(0), testBatch{values: values(1, "e"), pid: 9, seq: 17}.encode()); err != nil {
		t.Fatalf("producer expired while the broker was down, at sequence 17: %v", err)
	}
}

func setExpiration(t *testing.T, l *Log, ms string) {
	t.Helper()
	err := l.BrokerConfig().Set(context.Background(), func(m map[string]string) (map[string]string, error) {
		m["producer.id.expiration.ms"] = ms
		return m, nil
	}, false)
	if err != nil {
		t.Fatal(err)
	}
}

// TestLegacyProducerStateMigrates: metadata written before producer
// deltas (the whole producer table as JSON in the partition state) opens
// and dedupes; the next commit moves the table into a snapshot and stops
// writing it into the partition state; and it still dedupes after that.
func TestLegacyProducerStateMigrates(t *testing.T) {
	ctx := context.Background()
	e := newLogEnv(t, nil)
	l := e.open()
	tp := createTopic(t, l, "t", 1, nil)
	p := tp.Partition(0)
	var offsets []int64
	for i := range 4 {
		offsets = append(offsets, produce(t, l, p, testBatch{values: values(1, "a"), pid: int64(50 + i), firstTS: 1}).BaseOffset)
	}
	uploadAll(t, l)
	l = restart(t, e, l)
	writeLegacyProducers(t, e, tp.ID)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	e.meta.Close()
	e.meta = nil
	l = e.open()
	p = l.topics["t"].Partition(0)
	for i := range 4 {
		wantDuplicate(t, l, p, testBatch{values: values(1, "a"), pid: int64(50 + i), firstTS: 1}, offsets[i])
	}
	produce(t, l, p, testBatch{values: values(1, "b"), pid: 50, seq: 1})
	uploadAll(t, l)
	if st, _, err := e.meta.PartitionState(ctx, tp.ID, 0); err != nil || len(st.Producers) != 0 {
		t.Fatalf("partition state after a commit still holds %d producers in the old encoding (err %v)", len(st.Producers), err)
	}
	l = restart(t, e, l)
	p = l.topics["t"].Partition(0)
	for i := 1; i < 4; i++ {
		wantDuplicate(t, l, p, testBatch{values: values(1, "a"), pid: int64(50 + i), firstTS: 1}, offsets[i])
	}
	wantDuplicate(t, l, p, testBatch{values: values(1, "a"), pid: 50, firstTS: 1}, offsets[0])
}

// writeLegacyProducers rewrites the topic's partition 0 into the encoding
// of the code before producer deltas: every producer, as JSON, inside the
// partition state (with the producers' own batch times), and no producer
// keys.
func writeLegacyProducers(t *testing.T, e *logEnv, id metadata.TopicID) {
	t.Helper()
	ctx := context.Background()
	list, err := e.meta.ProducerStates(ctx, id, 0)
	if err != nil || len(list) == 0 {
		t.Fatalf("producer states: %d, err %v", len(list), err)
	}
	for i := range list {
		list[i].LastTimeMs = 1 // the old code kept the producer's batch timestamp
	}
	st, _, err := e.meta.PartitionState(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	st.Producers = list
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	key := "parts/" + id.String() + "/0000000000"
	if !strings.Contains(string(raw), `"producers":[{"id":50,"epoch":0,"last_time_ms":1,"batches":[{"first_seq":0`) {
		t.Fatalf("legacy encoding %s", raw)
	}
	_, err = e.kv.Txn(ctx, nil, []metadata.Op{metadata.DeletePrefix("producers/" + id.String() + "/"), metadata.Put(key, raw)})
	if err != nil {
		t.Fatal(err)
	}
}
