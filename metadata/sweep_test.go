package metadata_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/sediment-io/sediment/metadata"
)

// TestClaimOrphanOrdersWithCommit: the sweep's claim and an upload's
// commit of the same object are ordered by the KV; whichever lands second
// loses, so a committed object is never claimed and a claimed one is never
// committed.
func TestClaimOrphanOrdersWithCommit(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	id := metadata.NewTopicID()
	if err := s.CreateTopic(ctx, metadata.Topic{Name: "t", ID: id, Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	commitObj(t, s, id, "committed", 0, 10)
	if ok, err := s.ClaimOrphan(ctx, "committed"); err != nil || ok {
		t.Fatalf("claim of a committed object: %v, %v; want false", ok, err)
	}
	if ok, err := s.ClaimOrphan(ctx, "swept"); err != nil || !ok {
		t.Fatalf("claim of an unknown object: %v, %v; want true", ok, err)
	}
	if ok, err := s.ClaimOrphan(ctx, "swept"); err != nil || !ok {
		t.Fatalf("second claim (a pass whose delete failed): %v, %v; want true", ok, err)
	}
	_, err := s.CommitSegments(ctx, []metadata.SegmentCommit{{Segment: metadata.Segment{
		Topic: id, BaseOffset: 10, EndOffset: 20, Object: "swept", Len: 10}}})
	if !errors.Is(err, metadata.ErrObjectSwept) {
		t.Fatalf("commit of a claimed object: %v, want ErrObjectSwept", err)
	}
	segs, _ := s.Segments(ctx, id, 0, 0, 0)
	repl := []metadata.Segment{{Topic: id, BaseOffset: 0, EndOffset: 10, Object: "swept", Len: 10}}
	if err := s.ReplaceSegments(ctx, segs, repl, 0); !errors.Is(err, metadata.ErrObjectSwept) {
		t.Fatalf("compaction into a claimed object: %v, want ErrObjectSwept", err)
	}
	if got, _ := s.Segments(ctx, id, 0, 0, 0); len(got) != 1 || got[0].Object != "committed" {
		t.Fatalf("index after the refused commits: %+v", got)
	}
}

func TestUnknownObjects(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	id := metadata.NewTopicID()
	if err := s.CreateTopic(ctx, metadata.Topic{Name: "t", ID: id, Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	commitObj(t, s, id, "data/b", 0, 10)
	if err := s.MarkGarbage(ctx, "data/d", 0); err != nil {
		t.Fatal(err)
	}
	got, err := s.UnknownObjects(ctx, []string{"data/a", "data/b", "data/c", "data/d", "data/e"})
	if err != nil || !slices.Equal(got, []string{"data/a", "data/c", "data/e"}) {
		t.Fatalf("UnknownObjects = %q, %v; want a, c and e", got, err)
	}
}

func TestOrphanSweepCursor(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	cur, err := s.OrphanSweepCursor(ctx)
	if err != nil || cur != (metadata.SweepCursor{}) {
		t.Fatalf("fresh cursor: %+v, %v", cur, err)
	}
	stale := cur
	cur.After = "data/x"
	if cur, err = s.SetOrphanSweepCursor(ctx, cur); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetOrphanSweepCursor(ctx, stale); !metadata.IsConflict(err) {
		t.Fatalf("save over a moved cursor: %v, want a conflict", err)
	}
	if got, _ := s.OrphanSweepCursor(ctx); got != cur {
		t.Fatalf("cursor read back: %+v, want %+v", got, cur)
	}
}

func TestForgetTombstonesKeepsFreshOnes(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	for _, k := range []string{"a", "b", "c"} {
		if _, err := s.ClaimOrphan(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	after, err := s.ForgetTombstones(ctx, "", 2)
	if err != nil || after != "b" {
		t.Fatalf("first page: %q, %v; want to stop after b", after, err)
	}
	if after, err = s.ForgetTombstones(ctx, after, 2); err != nil || after != "" {
		t.Fatalf("last page: %q, %v; want the end", after, err)
	}
	if _, err := s.CommitSegments(ctx, []metadata.SegmentCommit{{Segment: metadata.Segment{Object: "c"}}}); !errors.Is(err, metadata.ErrObjectSwept) {
		t.Fatalf("a fresh tombstone was forgotten: commit of c: %v", err)
	}
}
