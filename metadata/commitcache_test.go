package metadata_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sediment-io/sediment/metadata"
)

// countingKV counts the reads of partition states and the lost
// compare-and-swaps.
type countingKV struct {
	metadata.KV
	stateGets atomic.Int64
	conflicts atomic.Int64
}

func (c *countingKV) Get(ctx context.Context, key string) (metadata.Item, bool, error) {
	if strings.HasPrefix(key, "parts/") {
		c.stateGets.Add(1)
	}
	return c.KV.Get(ctx, key)
}

func (c *countingKV) Txn(ctx context.Context, conds []metadata.Cond, ops []metadata.Op) (int64, error) {
	rev, err := c.KV.Txn(ctx, conds, ops)
	if metadata.IsConflict(err) {
		c.conflicts.Add(1)
	}
	return rev, err
}

// twoStores returns two Stores over one KV (two writers, each with its own
// commit cache) and the counting KV under the first.
func twoStores(t *testing.T) (*metadata.Store, *metadata.Store, *countingKV) {
	t.Helper()
	kv, err := metadata.OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kv.Close() })
	counting := &countingKV{KV: kv}
	return metadata.NewStore(counting), metadata.NewStore(kv), counting
}

func commitOf(id metadata.TopicID, p int32, base, end int64, obj string) []metadata.SegmentCommit {
	return []metadata.SegmentCommit{{
		Segment:   metadata.Segment{Topic: id, Partition: p, BaseOffset: base, EndOffset: end, Object: obj, Len: 10},
		Producers: []metadata.ProducerState{{ID: 7, Epoch: 1}},
	}}
}

// committedTopic creates topic "t" with one partition through s and
// commits offsets [0, 10) of it in object "a".
func committedTopic(t *testing.T, s *metadata.Store) metadata.TopicID {
	t.Helper()
	ctx := context.Background()
	id := metadata.NewTopicID()
	if err := s.CreateTopic(ctx, metadata.Topic{Name: "t", ID: id, Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommitSegments(ctx, commitOf(id, 0, 0, 10, "a")); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestCommitSegmentsPlansFromCache(t *testing.T) {
	ctx := context.Background()
	s, _, kv := twoStores(t)
	id := committedTopic(t, s)
	before := kv.stateGets.Load()
	for i, obj := range []string{"b", "c", "d"} {
		base := int64(10 * (i + 1))
		if _, err := s.CommitSegments(ctx, commitOf(id, 0, base, base+10, obj)); err != nil {
			t.Fatal(err)
		}
	}
	if n := kv.stateGets.Load() - before; n != 0 {
		t.Fatalf("%d partition state reads for three commits after the first, want 0", n)
	}
	st, _, err := s.PartitionState(ctx, id, 0)
	if err != nil || st.NextOffset != 40 {
		t.Fatalf("state %+v err=%v", st, err)
	}
	prods, err := s.ProducerStates(ctx, id, 0)
	if err != nil || len(prods) != 1 || prods[0].ID != 7 {
		t.Fatalf("producers %+v err=%v", prods, err)
	}
}

// TestCommitSegmentsStaleCache has a second writer change what the first
// one's cache holds: the first one's next commit must neither overwrite it
// nor fail.
func TestCommitSegmentsStaleCache(t *testing.T) {
	ctx := context.Background()
	s, other, _ := twoStores(t)
	id := committedTopic(t, s)

	// Another writer raises the log start offset: the cached state's
	// version is stale, and the commit must keep the new log start.
	if err := other.SetLogStartOffset(ctx, id, 0, 5); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommitSegments(ctx, commitOf(id, 0, 10, 20, "b")); err != nil {
		t.Fatal(err)
	}
	if st, _, _ := s.PartitionState(ctx, id, 0); st.LogStartOffset != 5 || st.NextOffset != 20 {
		t.Fatalf("after a stale cache: %+v, want log start 5, next 20", st)
	}

	// Another writer commits the next segment: the cache says 20, the
	// store 30. A commit at 20 is a gap on the stored state, one at 30 is
	// not.
	if _, err := other.CommitSegments(ctx, commitOf(id, 0, 20, 30, "c")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommitSegments(ctx, commitOf(id, 0, 20, 25, "d")); !errors.Is(err, metadata.ErrOffsetGap) {
		t.Fatalf("commit at the cached next offset: %v, want ErrOffsetGap", err)
	}
	if _, err := s.CommitSegments(ctx, commitOf(id, 0, 30, 40, "e")); err != nil {
		t.Fatalf("commit at the stored next offset: %v", err)
	}
	if st, _, _ := s.PartitionState(ctx, id, 0); st.NextOffset != 40 {
		t.Fatalf("next offset %d, want 40", st.NextOffset)
	}

	// The topic is deleted by the other writer: the commit skips the
	// partition instead of writing into a deleted topic.
	topic, _, err := other.Topic(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if err := other.DeleteTopic(ctx, topic); err != nil {
		t.Fatal(err)
	}
	skipped, err := s.CommitSegments(ctx, commitOf(id, 0, 40, 50, "f"))
	if err != nil || len(skipped) != 1 {
		t.Fatalf("commit to a deleted topic: skipped=%v err=%v", skipped, err)
	}
	if _, ok, _ := s.PartitionState(ctx, id, 0); ok {
		t.Fatal("the deleted topic's partition state came back")
	}
}

// TestCommitSegmentsAfterOwnWrites: the Store's own retention and
// DeleteRecords writes keep its cache coherent, so the next upload commit
// neither loses its compare-and-swap nor re-reads more than that one state.
func TestCommitSegmentsAfterOwnWrites(t *testing.T) {
	ctx := context.Background()
	s, _, kv := twoStores(t)
	id := committedTopic(t, s)
	if _, err := s.CommitSegments(ctx, commitOf(id, 0, 10, 20, "b")); err != nil {
		t.Fatal(err)
	}
	commit := func(base int64, obj string) {
		t.Helper()
		gets, conflicts := kv.stateGets.Load(), kv.conflicts.Load()
		if _, err := s.CommitSegments(ctx, commitOf(id, 0, base, base+10, obj)); err != nil {
			t.Fatal(err)
		}
		if n := kv.conflicts.Load() - conflicts; n != 0 {
			t.Fatalf("commit at %d: %d lost compare-and-swaps, want 0", base, n)
		}
		if n := kv.stateGets.Load() - gets; n != 1 {
			t.Fatalf("commit at %d: %d state reads, want 1", base, n)
		}
	}
	if err := s.SetLogStartOffset(ctx, id, 0, 5); err != nil {
		t.Fatal(err)
	}
	commit(20, "c")
	segs, err := s.Segments(ctx, id, 0, 0, 1)
	if err != nil || len(segs) != 1 {
		t.Fatalf("oldest segment: %+v err=%v", segs, err)
	}
	if err := s.DeleteSegments(ctx, id, 0, segs, 10, time.Minute); err != nil {
		t.Fatal(err)
	}
	commit(30, "d")
	if st, _, _ := s.PartitionState(ctx, id, 0); st.LogStartOffset != 10 || st.NextOffset != 40 {
		t.Fatalf("state %+v, want log start 10, next 40", st)
	}
}
