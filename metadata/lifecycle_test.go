package metadata_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sediment-io/sediment/metadata"
)

// commitObj commits one segment [base,end) of partition 0 in object obj.
func commitObj(t *testing.T, s *metadata.Store, id metadata.TopicID, obj string, base, end int64) {
	t.Helper()
	_, err := s.CommitSegments(context.Background(), []metadata.SegmentCommit{{Segment: metadata.Segment{
		Topic: id, BaseOffset: base, EndOffset: end, Object: obj, Len: 10}}})
	if err != nil {
		t.Fatal(err)
	}
}

func refs(t *testing.T, s *metadata.Store, obj string) int {
	t.Helper()
	rec, ok, err := s.Object(context.Background(), obj)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return 0
	}
	return rec.Refs
}

func TestObjectReferencesFollowSegments(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	id := metadata.NewTopicID()
	if err := s.CreateTopic(ctx, metadata.Topic{Name: "t", ID: id, Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	commitObj(t, s, id, "o1", 0, 10)
	commitObj(t, s, id, "o2", 10, 20)
	commitObj(t, s, id, "o3", 20, 30)
	segs, _ := s.Segments(ctx, id, 0, 0, 0)

	// Compaction: o1+o2 -> c1.
	repl := []metadata.Segment{{Topic: id, BaseOffset: 0, EndOffset: 12, Object: "c1", Len: 12},
		{Topic: id, BaseOffset: 12, EndOffset: 20, Object: "c1", Pos: 12, Len: 8}}
	if err := s.ReplaceSegments(ctx, segs[:2], repl, 0); err != nil {
		t.Fatal(err)
	}
	if refs(t, s, "o1") != 0 || refs(t, s, "c1") != 2 {
		t.Fatalf("refs after compaction: o1=%d c1=%d", refs(t, s, "o1"), refs(t, s, "c1"))
	}
	// The same stale segments again: a conflict, nothing changes.
	if err := s.ReplaceSegments(ctx, segs[:2], []metadata.Segment{{Topic: id, BaseOffset: 0, EndOffset: 20, Object: "c2"}}, 0); !errors.Is(err, metadata.ErrConflict) {
		t.Fatalf("stale replace: %v", err)
	}
	for off, want := range map[int64]string{0: "c1", 15: "c1", 25: "o3"} {
		seg, _, _ := s.FloorSegment(ctx, id, 0, off)
		if seg.Object != want {
			t.Fatalf("offset %d in %s, want %s", off, seg.Object, want)
		}
	}
	// Retention: delete c1's two segments, log start moves to 20.
	segs, _ = s.Segments(ctx, id, 0, 0, 0)
	if err := s.DeleteSegments(ctx, id, 0, segs[:2], 20, time.Hour); err != nil {
		t.Fatal(err)
	}
	if st, _, _ := s.PartitionState(ctx, id, 0); st.LogStartOffset != 20 {
		t.Fatalf("log start %d", st.LogStartOffset)
	}
	garbage, _ := s.Garbage(ctx, 0)
	keys := map[string]bool{}
	for _, g := range garbage {
		keys[g.Key] = true
	}
	if !keys["o1"] || !keys["o2"] || !keys["c1"] || keys["o3"] {
		t.Fatalf("garbage %v", keys)
	}
	for _, g := range garbage {
		if err := s.ForgetGarbage(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	if known, _ := s.ObjectKnown(ctx, "o1"); known {
		t.Fatal("forgotten garbage still known")
	}
	// Deleting the topic releases its last object.
	tp, _, _ := s.Topic(ctx, "t")
	if err := s.DeleteTopic(ctx, tp, 0); err != nil {
		t.Fatal(err)
	}
	if refs(t, s, "o3") != 0 {
		t.Fatal("object of a deleted topic still referenced")
	}
	if known, _ := s.ObjectKnown(ctx, "o3"); !known {
		t.Fatal("object of a deleted topic is neither referenced nor garbage")
	}
}
