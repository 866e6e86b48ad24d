package metadata_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/sediment-io/sediment/metadata"
)

func newStore(t *testing.T) *metadata.Store {
	t.Helper()
	kv, err := metadata.OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	s := metadata.NewStore(kv)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestTopicLifecycle(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	topic := metadata.Topic{Name: "orders", ID: metadata.NewTopicID(), Partitions: 2, Configs: map[string]string{"retention.ms": "1000"}}
	if err := s.CreateTopic(ctx, topic); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTopic(ctx, topic); !errors.Is(err, metadata.ErrTopicExists) {
		t.Fatalf("duplicate create: %v", err)
	}
	got, ok, err := s.Topic(ctx, "orders")
	if err != nil || !ok || got.ID != topic.ID || got.Configs["retention.ms"] != "1000" {
		t.Fatalf("topic: %+v ok=%v err=%v", got, ok, err)
	}
	grown := got
	grown.Partitions = 5
	if err := s.UpdateTopic(ctx, got, grown); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateTopic(ctx, got, grown); !metadata.IsConflict(err) {
		t.Fatalf("stale update: %v", err)
	}
	if _, ok, _ := s.PartitionState(ctx, topic.ID, 4); !ok {
		t.Fatal("new partition has no state")
	}
	all, err := s.Topics(ctx)
	if err != nil || len(all) != 1 || all[0].Partitions != 5 {
		t.Fatalf("topics: %+v err=%v", all, err)
	}
	if err := s.DeleteTopic(ctx, all[0]); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.PartitionState(ctx, topic.ID, 0); ok {
		t.Fatal("partition state survived topic deletion")
	}
}

func TestCommitSegments(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	id := metadata.NewTopicID()
	if err := s.CreateTopic(ctx, metadata.Topic{Name: "t", ID: id, Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	seg := func(base, end int64, obj string) metadata.SegmentCommit {
		return metadata.SegmentCommit{Segment: metadata.Segment{Topic: id, BaseOffset: base, EndOffset: end, Object: obj, Len: 10}}
	}
	gone := metadata.SegmentCommit{Segment: metadata.Segment{Topic: metadata.NewTopicID(), BaseOffset: 0, EndOffset: 1, Object: "a"}}
	skipped, err := s.CommitSegments(ctx, []metadata.SegmentCommit{seg(0, 10, "a"), gone})
	if err != nil || len(skipped) != 1 {
		t.Fatalf("commit: skipped=%v err=%v", skipped, err)
	}
	if _, err := s.CommitSegments(ctx, []metadata.SegmentCommit{seg(11, 20, "b")}); !errors.Is(err, metadata.ErrOffsetGap) {
		t.Fatalf("gap: %v", err)
	}
	if _, err := s.CommitSegments(ctx, []metadata.SegmentCommit{seg(10, 20, "b")}); err != nil {
		t.Fatal(err)
	}
	st, _, _ := s.PartitionState(ctx, id, 0)
	if st.NextOffset != 20 {
		t.Fatalf("next offset %d", st.NextOffset)
	}
	for _, tc := range []struct {
		off  int64
		want string
	}{{0, "a"}, {9, "a"}, {10, "b"}, {25, "b"}} {
		got, ok, err := s.FloorSegment(ctx, id, 0, tc.off)
		if err != nil || !ok || got.Object != tc.want {
			t.Fatalf("floor(%d) = %+v ok=%v err=%v, want %s", tc.off, got, ok, err, tc.want)
		}
	}
	segs, err := s.Segments(ctx, id, 0, 5, 0)
	if err != nil || len(segs) != 1 || segs[0].Object != "b" {
		t.Fatalf("segments from 5: %+v err=%v", segs, err)
	}
	if err := s.SetLogStartOffset(ctx, id, 0, 10); err != nil {
		t.Fatal(err)
	}
	if st, _, _ := s.PartitionState(ctx, id, 0); st.LogStartOffset != 10 || st.NextOffset != 20 {
		t.Fatalf("state after log start: %+v", st)
	}
}

func TestAllocateProducerIDs(t *testing.T) {
	s := newStore(t)
	a, err := s.AllocateProducerIDs(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.AllocateProducerIDs(context.Background(), 100)
	if err != nil || b != a+100 {
		t.Fatalf("second block starts at %d, want %d (err=%v)", b, a+100, err)
	}
}
