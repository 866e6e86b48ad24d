package metadata_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
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
	if err := s.DeleteTopic(ctx, tp); err != nil {
		t.Fatal(err)
	}
	if refs(t, s, "o3") != 1 {
		t.Fatal("object of a deleted topic released before its index")
	}
	if err := s.ReleaseDeletedTopics(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if refs(t, s, "o3") != 0 {
		t.Fatal("object of a deleted topic still referenced")
	}
	if known, _ := s.ObjectKnown(ctx, "o3"); !known {
		t.Fatal("object of a deleted topic is neither referenced nor garbage")
	}
}

// Deleting a topic frees its name and stops commits to it at once; its
// index is released in chunks afterwards, by a later call too (a crash in
// between, here a store reopened on the same file), and only the objects
// no other topic still uses become garbage.
func TestDeleteTopicReleasesIndexLater(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "meta.db")
	open := func() *metadata.Store {
		kv, err := metadata.OpenBolt(path)
		if err != nil {
			t.Fatal(err)
		}
		return metadata.NewStore(kv)
	}
	s := open()
	gone, kept := metadata.NewTopicID(), metadata.NewTopicID()
	if err := s.CreateTopic(ctx, metadata.Topic{Name: "gone", ID: gone, Partitions: 4}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTopic(ctx, metadata.Topic{Name: "kept", ID: kept, Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	// 200 objects of one segment per partition: 800 index entries, more
	// than three chunks. The last object also holds a segment of the
	// topic that stays.
	for i := range int64(200) {
		var commits []metadata.SegmentCommit
		for p := range int32(4) {
			commits = append(commits, metadata.SegmentCommit{Segment: metadata.Segment{
				Topic: gone, Partition: p, BaseOffset: i * 10, EndOffset: i*10 + 10, Object: fmt.Sprintf("o%d", i), Len: 10}})
		}
		if i == 199 {
			commits = append(commits, metadata.SegmentCommit{Segment: metadata.Segment{
				Topic: kept, BaseOffset: 0, EndOffset: 10, Object: "o199", Len: 10}})
		}
		if _, err := s.CommitSegments(ctx, commits); err != nil {
			t.Fatal(err)
		}
	}
	tp, _, _ := s.Topic(ctx, "gone")
	if err := s.DeleteTopic(ctx, tp); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Topic(ctx, "gone"); ok {
		t.Fatal("deleted topic still listed")
	}
	skipped, err := s.CommitSegments(ctx, []metadata.SegmentCommit{{Segment: metadata.Segment{
		Topic: gone, BaseOffset: 2000, EndOffset: 2010, Object: "late", Len: 10}}})
	if err != nil || len(skipped) != 1 {
		t.Fatalf("commit to a deleted topic: skipped %v, err %v", skipped, err)
	}
	if refs(t, s, "o0") != 4 {
		t.Fatalf("o0 has %d references before the release, want 4", refs(t, s, "o0"))
	}
	s.Close()

	s = open()
	defer s.Close()
	if err := s.ReleaseDeletedTopics(ctx, 0); err != nil {
		t.Fatal(err)
	}
	for p := range int32(4) {
		if segs, _ := s.Segments(ctx, gone, p, 0, 0); len(segs) != 0 {
			t.Fatalf("partition %d: %d index entries left", p, len(segs))
		}
	}
	for i := range 199 {
		if obj := fmt.Sprintf("o%d", i); refs(t, s, obj) != 0 {
			t.Fatalf("%s still referenced", obj)
		}
	}
	if refs(t, s, "o199") != 1 {
		t.Fatalf("o199 has %d references, want the kept topic's 1", refs(t, s, "o199"))
	}
	garbage, _ := s.Garbage(ctx, 0)
	if len(garbage) != 200 { // o0..o198, and "late", garbage at once
		t.Fatalf("%d garbage objects, want 200", len(garbage))
	}
	if err := s.ReleaseDeletedTopics(ctx, 0); err != nil { // nothing left: a no-op
		t.Fatal(err)
	}
	if g, _ := s.Garbage(ctx, 0); len(g) != 200 {
		t.Fatalf("a second release changed the garbage: %d", len(g))
	}
}

// A deleted-topic record that does not decode is reported, and the other
// deleted topics are released all the same.
func TestReleaseDeletedTopicsPastABadRecord(t *testing.T) {
	ctx := context.Background()
	kv, err := metadata.OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	s := metadata.NewStore(kv)
	defer s.Close()
	id := metadata.NewTopicID()
	if err := s.CreateTopic(ctx, metadata.Topic{Name: "gone", ID: id, Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommitSegments(ctx, []metadata.SegmentCommit{{Segment: metadata.Segment{
		Topic: id, BaseOffset: 0, EndOffset: 10, Object: "o", Len: 10}}}); err != nil {
		t.Fatal(err)
	}
	tp, _, _ := s.Topic(ctx, "gone")
	if err := s.DeleteTopic(ctx, tp); err != nil {
		t.Fatal(err)
	}
	// Sorts before the real record, so it is met first.
	if _, err := kv.Txn(ctx, nil, []metadata.Op{metadata.Put("deleted-topics/0", []byte("not json"))}); err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseDeletedTopics(ctx, 0); err == nil || !strings.Contains(err.Error(), "deleted-topics/0") {
		t.Fatalf("release past a bad record: %v, want an error naming it", err)
	}
	if segs, _ := s.Segments(ctx, id, 0, 0, 0); len(segs) != 0 {
		t.Fatalf("%d index entries of the deleted topic left", len(segs))
	}
	if g, _ := s.Garbage(ctx, 0); len(g) != 1 {
		t.Fatalf("%d garbage objects, want the deleted topic's 1", len(g))
	}
}
