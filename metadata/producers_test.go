package metadata

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
)

// etcdLimitKV fails any transaction etcd would refuse with its default
// limits: more than 128 operations (or conditions), or a request over
// 1.5 MiB.
type etcdLimitKV struct {
	KV
	t *testing.T
}

func (k *etcdLimitKV) Txn(ctx context.Context, conds []Cond, ops []Op) (int64, error) {
	size := 0
	for _, op := range ops {
		size += len(op.Key) + len(op.Value)
	}
	if len(conds) > 128 || len(ops) > 128 || size > 3<<19 {
		k.t.Errorf("transaction of %d conditions, %d ops, %d bytes is over etcd's limits", len(conds), len(ops), size)
	}
	return k.KV.Txn(ctx, conds, ops)
}

func limitedStore(t *testing.T) *Store {
	kv, err := OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kv.Close() })
	return NewStore(&etcdLimitKV{KV: kv, t: t})
}

// segmentDelta is n producers (ids from first) each with one batch in the
// segment at base, seen at timeMs.
func segmentDelta(id TopicID, base int64, first int64, n int, timeMs int64) SegmentCommit {
	c := SegmentCommit{Segment: Segment{Topic: id, BaseOffset: base, EndOffset: base + int64(n), Object: fmt.Sprintf("o%d", base), Len: 1}}
	for i := range n {
		off := base + int64(i)
		c.Producers = append(c.Producers, ProducerState{ID: first + int64(i), Epoch: 3, LastTimeMs: timeMs,
			Batches: []ProducerBatch{{FirstSeq: 0, LastSeq: 0, BaseOffset: off, LastOffset: off}}})
	}
	return c
}

// TestFoldProducersAtScale: 20,000 producers of one partition committed as
// 250 deltas fold into a snapshot with every transaction inside etcd's
// limits, the state read back is the same before and after, and a fold
// drops the producers idle past the expiry time it is given.
func TestFoldProducersAtScale(t *testing.T) {
	ctx := context.Background()
	s := limitedStore(t)
	id := NewTopicID()
	if err := s.CreateTopic(ctx, Topic{Name: "t", ID: id, Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	const segments, perSegment = 250, 80
	for i := range segments {
		c := segmentDelta(id, int64(i*perSegment), int64(i*perSegment), perSegment, int64(i))
		if _, err := s.CommitSegments(ctx, []SegmentCommit{c}); err != nil {
			t.Fatal(err)
		}
	}
	before, err := s.ProducerStates(ctx, id, 0)
	if err != nil || len(before) != segments*perSegment {
		t.Fatalf("%d producers before folding, err %v", len(before), err)
	}
	folded := 0
	for range 10 {
		n, err := s.FoldProducers(ctx, id, 0, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		folded += n
	}
	if folded != segments {
		t.Fatalf("folded %d deltas, want %d", folded, segments)
	}
	after, err := s.ProducerStates(ctx, id, 0)
	if err != nil || !reflect.DeepEqual(before, after) {
		t.Fatalf("state changed by folding: %d producers before, %d after, err %v", len(before), len(after), err)
	}
	// One more segment, then a fold that expires everything last seen
	// before segment 125.
	if _, err := s.CommitSegments(ctx, []SegmentCommit{segmentDelta(id, segments*perSegment, 1<<40, 1, 1000)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FoldProducers(ctx, id, 0, 1, 125); err != nil {
		t.Fatal(err)
	}
	kept, err := s.ProducerStates(ctx, id, 0)
	if err != nil || len(kept) != (segments-125)*perSegment+1 {
		t.Fatalf("%d producers after expiring, want %d (err %v)", len(kept), (segments-125)*perSegment+1, err)
	}
}

// TestFoldAfterInterruptedFold: chunks a fold wrote before failing are
// cleared by the next fold, never read as part of a snapshot.
func TestFoldAfterInterruptedFold(t *testing.T) {
	ctx := context.Background()
	s := limitedStore(t)
	id := NewTopicID()
	if err := s.CreateTopic(ctx, Topic{Name: "t", ID: id, Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommitSegments(ctx, []SegmentCommit{segmentDelta(id, 0, 1, 3, 5)}); err != nil {
		t.Fatal(err)
	}
	// What a fold that died before its switch leaves: generation 1 chunks.
	stray := encodeProducers(nil, []ProducerState{{ID: 99, Epoch: 1, LastTimeMs: 5}})
	if _, err := s.kv.Txn(ctx, nil, []Op{Put(producerSnapKey(id, 0, 1, 0), stray), Put(producerSnapKey(id, 0, 1, 7), stray)}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.FoldProducers(ctx, id, 0, 1, 0); err != nil || n != 1 {
		t.Fatalf("fold: %d, %v", n, err)
	}
	got, err := s.ProducerStates(ctx, id, 0)
	if err != nil || len(got) != 3 || got[0].ID != 1 {
		t.Fatalf("producers %+v err %v, want 1..3 and not the stray 99", got, err)
	}
}

// TestCommitMigratesLegacyProducers: a partition state holding producers
// in the old encoding is moved into a snapshot by the next commit.
func TestCommitMigratesLegacyProducers(t *testing.T) {
	ctx := context.Background()
	s := limitedStore(t)
	id := NewTopicID()
	if err := s.CreateTopic(ctx, Topic{Name: "t", ID: id, Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	legacy := PartitionState{NextOffset: 10, Producers: segmentDelta(id, 0, 1, 10, 1).Producers}
	if _, err := s.kv.Txn(ctx, nil, []Op{putJSON(partKey(id, 0), legacy)}); err != nil {
		t.Fatal(err)
	}
	got, err := s.ProducerStates(ctx, id, 0)
	if err != nil || len(got) != 10 {
		t.Fatalf("legacy producers read: %d, err %v", len(got), err)
	}
	next := segmentDelta(id, 10, 5, 1, 9)
	next.Producers[0].Batches[0].FirstSeq, next.Producers[0].Batches[0].LastSeq = 1, 1
	if _, err := s.CommitSegments(ctx, []SegmentCommit{next}); err != nil {
		t.Fatal(err)
	}
	st, _, err := s.PartitionState(ctx, id, 0)
	if err != nil || len(st.Producers) != 0 || st.NextOffset != 11 {
		t.Fatalf("state after the migrating commit: %+v err %v", st, err)
	}
	got, err = s.ProducerStates(ctx, id, 0)
	if err != nil || len(got) != 10 || len(got[4].Batches) != 2 || got[4].Batches[1].BaseOffset != 10 {
		t.Fatalf("producers after migration: %+v err %v", got, err)
	}
}

func FuzzDecodeProducers(f *testing.F) {
	f.Add(encodeProducers(nil, nil))
	f.Add(encodeProducers(nil, segmentDelta(TopicID{}, 7, -3, 3, 42).Producers))
	f.Add([]byte{producerCodecV1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add(encodeProducers(nil, []ProducerState{{ID: 4, Epoch: 2, LastTimeMs: 9, CoordEpoch: 7, TxnOpen: true, TxnFirst: 30,
		Aborted: []TxnRange{{First: 3, Last: 12}, {First: 14, Last: 20}}}}))
	f.Add([]byte{producerCodecV2, 1, 2, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		list, err := decodeProducers(b)
		if err != nil {
			return
		}
		again, err := decodeProducers(encodeProducers(nil, list))
		if err != nil || !reflect.DeepEqual(list, again) && !(len(list) == 0 && len(again) == 0) {
			t.Fatalf("accepted %x as %+v, which does not round-trip: %+v %v", b, list, again, err)
		}
	})
}

// hookKV runs before, once, ahead of the first transaction that writes key.
type hookKV struct {
	KV
	key    string
	before func()
}

func (k *hookKV) Txn(ctx context.Context, conds []Cond, ops []Op) (int64, error) {
	for _, op := range ops {
		if op.Key == k.key && k.before != nil {
			f := k.before
			k.before = nil
			f()
		}
	}
	return k.KV.Txn(ctx, conds, ops)
}

// TestFoldRacingTopicDeletion: a fold whose switch loses to a deletion of
// the topic leaves no producer key behind once the deletion is released.
func TestFoldRacingTopicDeletion(t *testing.T) {
	ctx := context.Background()
	kv, err := OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	id := NewTopicID()
	hook := &hookKV{KV: kv, key: producerSnapKey(id, 0, 1, 0)}
	s := NewStore(hook)
	topic := Topic{Name: "t", ID: id, Partitions: 1}
	if err := s.CreateTopic(ctx, topic); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommitSegments(ctx, []SegmentCommit{segmentDelta(id, 0, 1, 3, 5)}); err != nil {
		t.Fatal(err)
	}
	hook.before = func() {
		topics, err := s.Topics(ctx)
		if err != nil || len(topics) != 1 {
			t.Fatalf("topics %v err %v", topics, err)
		}
		if err := s.DeleteTopic(ctx, topics[0]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.FoldProducers(ctx, id, 0, 1, 0); !IsConflict(err) {
		t.Fatalf("fold racing a topic deletion: %v, want a conflict", err)
	}
	if err := s.ReleaseDeletedTopics(ctx, 0); err != nil {
		t.Fatal(err)
	}
	left, err := kv.Range(ctx, producerPrefix(id), PrefixEnd(producerPrefix(id)), 0, false)
	if err != nil || len(left) != 0 {
		t.Fatalf("%d producer keys left after the topic was deleted and released (err %v)", len(left), err)
	}
}

// rangeHookKV runs before, once, ahead of the first Range from start.
type rangeHookKV struct {
	KV
	start  string
	before func()
}

func (k *rangeHookKV) Range(ctx context.Context, start, end string, limit int, reverse bool) ([]Item, error) {
	if start == k.start && k.before != nil {
		f := k.before
		k.before = nil
		f()
	}
	return k.KV.Range(ctx, start, end, limit, reverse)
}

// TestProducerStatesRacingFold: a fold that moves the deltas into a new
// snapshot between the reader's snapshot read and its delta read does not
// make those producers vanish from the state read (a reset partition
// reloads its dedupe state this way while compaction folds).
func TestProducerStatesRacingFold(t *testing.T) {
	ctx := context.Background()
	kv, err := OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	id := NewTopicID()
	hook := &rangeHookKV{KV: kv, start: producerDeltaPrefix(id, 0)}
	s := NewStore(hook)
	if err := s.CreateTopic(ctx, Topic{Name: "t", ID: id, Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := s.CommitSegments(ctx, []SegmentCommit{segmentDelta(id, int64(i*2), int64(1+i*2), 2, 5)}); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 2 { // with no snapshot yet, then over an existing one
		if _, err := s.CommitSegments(ctx, []SegmentCommit{segmentDelta(id, int64(6+round), int64(100+round), 1, 5)}); err != nil {
			t.Fatal(err)
		}
		hook.before = func() {
			if n, err := s.FoldProducers(ctx, id, 0, 1, 0); err != nil || n == 0 {
				t.Errorf("fold: %d, %v", n, err)
			}
		}
		got, err := s.ProducerStates(ctx, id, 0)
		if want := 7 + round; err != nil || len(got) != want {
			t.Fatalf("round %d: %d producers read across a fold, want %d (err %v)", round, len(got), want, err)
		}
		if hook.before != nil {
			t.Fatal("the fold never ran inside the read")
		}
	}
}

// TestTxnProducerState: the transactional state of producer deltas reads
// back merged (the latest open transaction, the coordinator epoch never
// falling, the aborted transactions accumulating), and a fold keeps the
// producers with a transaction open or aborted transactions still in the
// log however idle they are, and drops the aborted transactions below the
// log start offset.
func TestTxnProducerState(t *testing.T) {
	ctx := context.Background()
	s := limitedStore(t)
	id := NewTopicID()
	if err := s.CreateTopic(ctx, Topic{Name: "t", ID: id, Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	seg := func(base, end int64, ps ...ProducerState) SegmentCommit {
		return SegmentCommit{Segment: Segment{Topic: id, BaseOffset: base, EndOffset: end, Object: fmt.Sprintf("o%d", base), Len: 1}, Producers: ps}
	}
	commits := []SegmentCommit{
		seg(0, 10,
			ProducerState{ID: 1, Epoch: 0, LastTimeMs: 5, TxnOpen: true, TxnFirst: 0,
				Batches: []ProducerBatch{{FirstSeq: 0, LastSeq: 0, BaseOffset: 0, LastOffset: 0}}},
			ProducerState{ID: 2, Epoch: 0, LastTimeMs: 5, TxnOpen: true, TxnFirst: 1,
				Batches: []ProducerBatch{{FirstSeq: 0, LastSeq: 0, BaseOffset: 1, LastOffset: 1}}}),
		// Producer 1 aborts at 10 (a marker at a new epoch), producer 2's
		// transaction stays open.
		seg(10, 20, ProducerState{ID: 1, Epoch: 1, LastTimeMs: 6, CoordEpoch: 3, Aborted: []TxnRange{{First: 0, Last: 10}}}),
		// Producer 1 opens and aborts again; producer 3 is plain idempotent.
		seg(20, 30,
			ProducerState{ID: 1, Epoch: 1, LastTimeMs: 7, CoordEpoch: 3, Aborted: []TxnRange{{First: 20, Last: 25}},
				Batches: []ProducerBatch{{FirstSeq: 0, LastSeq: 0, BaseOffset: 20, LastOffset: 20}}},
			ProducerState{ID: 3, Epoch: 0, LastTimeMs: 7,
				Batches: []ProducerBatch{{FirstSeq: 0, LastSeq: 0, BaseOffset: 26, LastOffset: 26}}}),
	}
	for _, c := range commits {
		if _, err := s.CommitSegments(ctx, []SegmentCommit{c}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ProducerStates(ctx, id, 0)
	if err != nil || len(got) != 3 {
		t.Fatalf("producers %+v, %v", got, err)
	}
	if p1 := got[0]; p1.Epoch != 1 || p1.CoordEpoch != 3 || p1.TxnOpen || len(p1.Batches) != 1 ||
		!reflect.DeepEqual(p1.Aborted, []TxnRange{{0, 10}, {20, 25}}) {
		t.Fatalf("producer 1: %+v", p1)
	}
	if p2 := got[1]; !p2.TxnOpen || p2.TxnFirst != 1 {
		t.Fatalf("producer 2: %+v", p2)
	}
	if err := s.SetLogStartOffset(ctx, id, 0, 15); err != nil {
		t.Fatal(err)
	}
	// Every producer is idle past the expiry time given.
	if n, err := s.FoldProducers(ctx, id, 0, 1, 1000); err != nil || n != 3 {
		t.Fatalf("fold: %d, %v", n, err)
	}
	got, err = s.ProducerStates(ctx, id, 0)
	if err != nil || len(got) != 2 || got[0].ID != 1 || got[1].ID != 2 {
		t.Fatalf("producers after the fold: %+v, %v", got, err)
	}
	if !reflect.DeepEqual(got[0].Aborted, []TxnRange{{20, 25}}) || !got[1].TxnOpen {
		t.Fatalf("producers after the fold: %+v", got)
	}
}

// TestManyAbortedFitValues: a producer with more aborted transactions than
// one entry carries is split over entries of bounded size and reads back
// whole, through a snapshot within etcd's limits.
func TestManyAbortedFitValues(t *testing.T) {
	ctx := context.Background()
	s := limitedStore(t)
	id := NewTopicID()
	if err := s.CreateTopic(ctx, Topic{Name: "t", ID: id, Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	const n = 3*maxAbortedPerEntry + 5
	st := ProducerState{ID: 1, Epoch: 2, LastTimeMs: 9, CoordEpoch: 4,
		Batches: []ProducerBatch{{FirstSeq: 0, LastSeq: 0, BaseOffset: 0, LastOffset: 0}}}
	for i := range int64(n) {
		st.Aborted = append(st.Aborted, TxnRange{First: 1_000_000_000 + 2*i, Last: 1_000_000_000 + 2*i + 1})
	}
	chunks := chunkProducers([]ProducerState{st}, maxProducerValue)
	m := map[int64]*ProducerState{}
	for _, c := range chunks {
		if len(c) > maxProducerValue {
			t.Fatalf("a value of %d bytes", len(c))
		}
		list, err := decodeProducers(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range list {
			MergeProducer(m, d)
		}
	}
	if got := m[1]; got == nil || !reflect.DeepEqual(*got, st) {
		t.Fatalf("split producer reads back wrong (%d aborted)", len(m[1].Aborted))
	}
	if _, err := s.CommitSegments(ctx, []SegmentCommit{{Segment: Segment{Topic: id, EndOffset: 1, Object: "o", Len: 1},
		Producers: []ProducerState{st}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FoldProducers(ctx, id, 0, 1, 0); err != nil {
		t.Fatal(err)
	}
	got, err := s.ProducerStates(ctx, id, 0)
	if err != nil || len(got) != 1 || len(got[0].Aborted) != n {
		t.Fatalf("after the fold: %d producers, err %v", len(got), err)
	}
}
