package metadata_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/sediment-io/sediment/metadata"
)

// fenceKV moves a partition's owner key (a plain Put standing for another
// broker's lease key) just before its next transaction: the fence changes
// between a write's plan and its commit. It counts transactions.
type fenceKV struct {
	metadata.KV
	moveBefore atomic.Pointer[string] // key to rewrite before the next Txn
	txns       atomic.Int64
}

func (k *fenceKV) Txn(ctx context.Context, conds []metadata.Cond, ops []metadata.Op) (int64, error) {
	if key := k.moveBefore.Swap(nil); key != nil {
		if _, err := k.KV.Txn(ctx, nil, []metadata.Op{metadata.Put(*key, []byte(`{"node_id":2}`))}); err != nil {
			return 0, err
		}
	}
	k.txns.Add(1)
	return k.KV.Txn(ctx, conds, ops)
}

// takeOwner writes key as an owner would and returns its fence.
func takeOwner(t *testing.T, kv metadata.KV, key string) metadata.Cond {
	t.Helper()
	rev, err := kv.Txn(context.Background(), nil, []metadata.Op{metadata.Put(key, []byte(`{"node_id":1}`))})
	if err != nil {
		t.Fatal(err)
	}
	return metadata.Cond{Key: key, Version: rev}
}

func ownKey(id metadata.TopicID, p int32) string { return fmt.Sprintf("own/parts/%s/%010d", id, p) }

func fencedStore(t *testing.T) (*metadata.Store, *fenceKV) {
	t.Helper()
	bolt, err := metadata.OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	kv := &fenceKV{KV: bolt}
	s := metadata.NewStore(kv)
	t.Cleanup(func() { s.Close() })
	return s, kv
}

func fencedCommit(id metadata.TopicID, p int32, base, end int64, obj string, fence metadata.Cond) metadata.SegmentCommit {
	c := commitOf(id, p, base, end, obj)[0]
	c.Fence = &fence
	return c
}

// wantNotOwner checks that err is a *NotOwnerError naming exactly want.
func wantNotOwner(t *testing.T, err error, want ...metadata.PartitionKey) {
	t.Helper()
	var no *metadata.NotOwnerError
	if !errors.As(err, &no) || !errors.Is(err, metadata.ErrNotOwner) {
		t.Fatalf("got %v, want a NotOwnerError", err)
	}
	if fmt.Sprint(no.Partitions) != fmt.Sprint(want) {
		t.Fatalf("not-owner partitions %v, want %v", no.Partitions, want)
	}
}

// checkNext checks a partition's committed next offset.
func checkNext(t *testing.T, s *metadata.Store, id metadata.TopicID, p int32, want int64) {
	t.Helper()
	st, _, err := s.PartitionState(context.Background(), id, p)
	if err != nil || st.NextOffset != want {
		t.Fatalf("partition %d: next offset %d (err %v), want %d", p, st.NextOffset, err, want)
	}
}

// A commit whose fence holds applies; one whose fence moved between its
// plan (from the commit cache, with no read) and its transaction fails
// with a NotOwnerError after exactly one transaction and writes nothing.
func TestCommitSegmentsFenceMovedBeforeCommit(t *testing.T) {
	ctx := context.Background()
	s, kv := fencedStore(t)
	id := committedTopic(t, s)
	fence := takeOwner(t, kv, ownKey(id, 0))
	if _, err := s.CommitSegments(ctx, []metadata.SegmentCommit{fencedCommit(id, 0, 10, 20, "b", fence)}); err != nil {
		t.Fatalf("commit under a fence that holds: %v", err)
	}
	key := ownKey(id, 0)
	kv.moveBefore.Store(&key)
	before := kv.txns.Load()
	_, err := s.CommitSegments(ctx, []metadata.SegmentCommit{fencedCommit(id, 0, 20, 30, "c", fence)})
	wantNotOwner(t, err, metadata.PartitionKey{Topic: id, Partition: 0})
	if n := kv.txns.Load() - before; n != 1 {
		t.Fatalf("%d transactions, want 1: a failed fence is never retried", n)
	}
	checkNext(t, s, id, 0, 20)
	if known, err := s.ObjectKnown(ctx, "c"); err != nil || known {
		t.Fatalf("object c known=%v err=%v: a fenced-out commit wrote its object", known, err)
	}
}

// In an object of several partitions, only those whose fence failed are
// named; the others then commit without them.
func TestCommitSegmentsNamesOnlyFailedFences(t *testing.T) {
	ctx := context.Background()
	s, kv := fencedStore(t)
	id := metadata.NewTopicID()
	if err := s.CreateTopic(ctx, metadata.Topic{Name: "t", ID: id, Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	var commits []metadata.SegmentCommit
	for p := range int32(3) {
		commits = append(commits, fencedCommit(id, p, 0, 5, "a", takeOwner(t, kv, ownKey(id, p))))
	}
	takeOwner(t, kv, ownKey(id, 1)) // another broker took partition 1
	_, err := s.CommitSegments(ctx, commits)
	wantNotOwner(t, err, metadata.PartitionKey{Topic: id, Partition: 1})
	for p := range int32(3) {
		checkNext(t, s, id, p, 0)
	}
	if _, err := s.CommitSegments(ctx, []metadata.SegmentCommit{commits[0], commits[2]}); err != nil {
		t.Fatal(err)
	}
	checkNext(t, s, id, 0, 5)
	checkNext(t, s, id, 1, 0)
	checkNext(t, s, id, 2, 5)
}

// A new owner's commits make the old owner's next segment a gap; with its
// fence failed the old owner learns it lost the partition, not of a gap.
func TestCommitSegmentsGapOfAFencedOutOwner(t *testing.T) {
	ctx := context.Background()
	s, kv := fencedStore(t)
	id := committedTopic(t, s)
	old := takeOwner(t, kv, ownKey(id, 0))
	fresh := takeOwner(t, kv, ownKey(id, 0))
	if _, err := s.CommitSegments(ctx, []metadata.SegmentCommit{fencedCommit(id, 0, 10, 15, "new", fresh)}); err != nil {
		t.Fatal(err)
	}
	_, err := s.CommitSegments(ctx, []metadata.SegmentCommit{fencedCommit(id, 0, 10, 20, "old", old)})
	wantNotOwner(t, err, metadata.PartitionKey{Topic: id, Partition: 0})
	checkNext(t, s, id, 0, 15)
}

// The other writes about a partition's log fail with a NotOwnerError once
// their fence moved, and write nothing.
func TestPartitionWritesAreFenced(t *testing.T) {
	ctx := context.Background()
	s, kv := fencedStore(t)
	id := committedTopic(t, s)
	if _, err := s.CommitSegments(ctx, commitOf(id, 0, 10, 20, "b")); err != nil {
		t.Fatal(err)
	}
	key := ownKey(id, 0)
	fence := takeOwner(t, kv, key)
	segs, err := s.Segments(ctx, id, 0, 0, 0)
	if err != nil || len(segs) != 2 {
		t.Fatalf("segments %v err %v", segs, err)
	}
	pk := metadata.PartitionKey{Topic: id, Partition: 0}

	kv.moveBefore.Store(&key)
	wantNotOwner(t, s.SetLogStartOffset(ctx, id, 0, 5, fence), pk)
	fence = takeOwner(t, kv, key)
	kv.moveBefore.Store(&key)
	wantNotOwner(t, s.DeleteSegments(ctx, id, 0, segs[:1], 10, 0, fence), pk)
	fence = takeOwner(t, kv, key)
	repl := []metadata.Segment{{Topic: id, Partition: 0, BaseOffset: 0, EndOffset: 20, Object: "seg/x", Len: 20}}
	kv.moveBefore.Store(&key)
	wantNotOwner(t, s.ReplaceSegments(ctx, segs, repl, 0, fence), pk)
	fence = takeOwner(t, kv, key)
	kv.moveBefore.Store(&key)
	_, err = s.FoldProducers(ctx, id, 0, 1, 0, fence)
	wantNotOwner(t, err, pk)

	st, _, _ := s.PartitionState(ctx, id, 0)
	if st.LogStartOffset != 0 {
		t.Fatalf("log start %d: a fenced-out write applied", st.LogStartOffset)
	}
	if after, _ := s.Segments(ctx, id, 0, 0, 0); len(after) != 2 || after[0].Object != "a" {
		t.Fatalf("segments %v: a fenced-out write applied", after)
	}
	if list, err := s.ProducerStates(ctx, id, 0); err != nil || len(list) != 1 {
		t.Fatalf("producers %v err %v", list, err)
	}

	fence = takeOwner(t, kv, key) // the owner's own writes still apply
	if err := s.SetLogStartOffset(ctx, id, 0, 5, fence); err != nil {
		t.Fatal(err)
	}
	if n, err := s.FoldProducers(ctx, id, 0, 1, 0, fence); err != nil || n != 2 {
		t.Fatalf("fold under a fence that holds: %d, %v", n, err)
	}
}

// TopicPartitionStates reads every partition's state of a topic at once.
func TestTopicPartitionStates(t *testing.T) {
	ctx := context.Background()
	s, _ := fencedStore(t)
	id := metadata.NewTopicID()
	if err := s.CreateTopic(ctx, metadata.Topic{Name: "t", ID: id, Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommitSegments(ctx, commitOf(id, 1, 0, 7, "a")); err != nil {
		t.Fatal(err)
	}
	states, err := s.TopicPartitionStates(ctx, id)
	if err != nil || len(states) != 3 {
		t.Fatalf("states %v err %v", states, err)
	}
	for p := range int32(3) {
		want, _, _ := s.PartitionState(ctx, id, p)
		if got := states[p]; got.NextOffset != want.NextOffset || got.Version != want.Version {
			t.Fatalf("partition %d: %+v, want %+v", p, got, want)
		}
	}
}
