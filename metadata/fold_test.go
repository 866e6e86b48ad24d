package metadata_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

// onBothBackends runs body on bbolt and on a real embedded etcd.
func onBothBackends(t *testing.T, body func(t *testing.T, kv metadata.KV)) {
	t.Run("bbolt", func(t *testing.T) {
		kv, err := metadata.OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { kv.Close() })
		body(t, kv)
	})
	t.Run("etcd", func(t *testing.T) {
		endpoint, _ := etcdtest.Start(t)
		body(t, etcdtest.OpenKV(t, endpoint, "fold"))
	})
}

// manifests stands for the bucket: the manifests a test folded, by key.
type manifests struct {
	mu   sync.Mutex
	byID map[string][]metadata.Segment
}

func (m *manifests) read(_ context.Context, e metadata.Segment) ([]metadata.Segment, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	segs, ok := m.byID[e.Object]
	if !ok {
		return nil, fmt.Errorf("no manifest %s", e.Object)
	}
	return segs, nil
}

// foldFixture is a topic of two partitions whose n uploads ("o0"...) each
// hold one segment of both, [10i, 10i+10).
func foldFixture(t *testing.T, kv metadata.KV, n int) (*metadata.Store, metadata.TopicID, *manifests) {
	t.Helper()
	ctx := context.Background()
	s := metadata.NewStore(kv)
	id := metadata.NewTopicID()
	if err := s.CreateTopic(ctx, metadata.Topic{Name: "t", ID: id, Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	for i := range int64(n) {
		var commits []metadata.SegmentCommit
		for p := range int32(2) {
			commits = append(commits, metadata.SegmentCommit{Segment: metadata.Segment{Topic: id, Partition: p,
				BaseOffset: 10 * i, EndOffset: 10*i + 10, Object: fmt.Sprintf("o%d", i), Pos: int64(p) * 100, Len: 100,
				MaxTimestamp: 1000 + i}})
		}
		if _, err := s.CommitSegments(ctx, commits); err != nil {
			t.Fatal(err)
		}
	}
	m := &manifests{byID: map[string][]metadata.Segment{}}
	s.SetManifestReader(m.read)
	return s, id, m
}

// fold folds partition 0's entries [from, to) into manifest key.
func fold(t *testing.T, s *metadata.Store, m *manifests, id metadata.TopicID, from, to int, key string, fence ...metadata.Cond) error {
	t.Helper()
	segs, err := s.Segments(context.Background(), id, 0, int64(10*from), to-from)
	if err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	m.byID[key] = segs
	m.mu.Unlock()
	return s.FoldSegments(context.Background(), segs, metadata.ManifestEntry(segs, key), fence...)
}

func TestFoldSegments(t *testing.T) {
	onBothBackends(t, func(t *testing.T, kv metadata.KV) {
		ctx := context.Background()
		s, id, m := foldFixture(t, kv, 6)
		if err := fold(t, s, m, id, 0, 4, "manifest/a"); err != nil {
			t.Fatal(err)
		}
		segs, _ := s.Segments(ctx, id, 0, 0, 0)
		if len(segs) != 3 || !segs[0].Manifest || segs[0].EndOffset != 40 || segs[0].Len != 400 ||
			segs[0].MaxTimestamp != 1003 || segs[0].Entries != 4 || segs[1].BaseOffset != 40 {
			t.Fatalf("index after the fold: %+v", segs)
		}
		if f, ok, _ := s.FloorSegment(ctx, id, 0, 25); !ok || f.Object != "manifest/a" {
			t.Fatalf("floor of 25: %+v", f)
		}
		for i := range 6 { // the manifest holds partition 0's references now
			if r := refs(t, s, fmt.Sprintf("o%d", i)); r != 2 {
				t.Fatalf("o%d: %d references, want 2", i, r)
			}
		}
		if refs(t, s, "manifest/a") != 1 {
			t.Fatal("the manifest has no reference record")
		}
		// Retention drops the manifest entry: every object it lists and
		// the manifest itself lose a reference.
		if err := s.DeleteSegments(ctx, id, 0, segs[:1], 40, 0); err != nil {
			t.Fatal(err)
		}
		for i := range 6 {
			if want := map[bool]int{true: 1, false: 2}[i < 4]; refs(t, s, fmt.Sprintf("o%d", i)) != want {
				t.Fatalf("o%d: %d references after retention, want %d", i, refs(t, s, fmt.Sprintf("o%d", i)), want)
			}
		}
		if ok, _ := s.ObjectKnown(ctx, "manifest/a"); !ok || refs(t, s, "manifest/a") != 0 {
			t.Fatal("the released manifest is not garbage")
		}
	})
}

// A fold on stale entries, by a broker that lost the partition, or with a
// manifest the orphan sweep claimed, writes nothing.
func TestFoldSegmentsRefused(t *testing.T) {
	onBothBackends(t, func(t *testing.T, kv metadata.KV) {
		ctx := context.Background()
		s, id, m := foldFixture(t, kv, 4)
		stale, _ := s.Segments(ctx, id, 0, 0, 3)
		if err := s.DeleteSegments(ctx, id, 0, stale[:1], 10, 0); err != nil {
			t.Fatal(err)
		}
		if err := s.FoldSegments(ctx, stale, metadata.ManifestEntry(stale, "manifest/stale")); !metadata.IsConflict(err) {
			t.Fatalf("fold of a deleted entry: %v, want a conflict", err)
		}
		fence := takeOwner(t, kv, ownKey(id, 0))
		takeOwner(t, kv, ownKey(id, 0)) // another broker took it
		wantNotOwner(t, fold(t, s, m, id, 1, 3, "manifest/zombie", fence), metadata.PartitionKey{Topic: id})
		if claimed, err := s.ClaimOrphan(ctx, "manifest/swept"); err != nil || !claimed {
			t.Fatalf("claim: %v %v", claimed, err)
		}
		if err := fold(t, s, m, id, 1, 3, "manifest/swept"); !errors.Is(err, metadata.ErrObjectSwept) {
			t.Fatalf("fold into a swept manifest: %v", err)
		}
		segs, _ := s.Segments(ctx, id, 0, 0, 0)
		if len(segs) != 3 || segs[0].Manifest {
			t.Fatalf("index after refused folds: %+v", segs)
		}
		for _, k := range []string{"manifest/stale", "manifest/zombie"} {
			if ok, _ := s.ObjectKnown(ctx, k); ok {
				t.Fatalf("%s is known after a refused fold", k)
			}
		}
	})
}

// A manifest entry removed without a way to read its manifest fails and
// changes nothing: its objects' references must never leak.
func TestManifestEntryNeedsItsManifest(t *testing.T) {
	ctx := context.Background()
	bolt, err := metadata.OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bolt.Close() })
	s, id, m := foldFixture(t, bolt, 3)
	if err := fold(t, s, m, id, 0, 3, "manifest/a"); err != nil {
		t.Fatal(err)
	}
	bare := metadata.NewStore(bolt) // no manifest reader
	segs, _ := bare.Segments(ctx, id, 0, 0, 0)
	if err := bare.DeleteSegments(ctx, id, 0, segs, 30, 0); err == nil {
		t.Fatal("deleted a manifest entry it could not read")
	}
	if got, _ := bare.Segments(ctx, id, 0, 0, 0); len(got) != 1 || refs(t, bare, "o0") != 2 {
		t.Fatalf("a failed delete changed the index (%d entries) or references (%d)", len(got), refs(t, bare, "o0"))
	}
	// A deleted topic's release reads the manifest and frees everything.
	tp, _, _ := s.Topic(ctx, "t")
	if err := s.DeleteTopic(ctx, tp); err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseDeletedTopics(ctx, 0); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"o0", "o1", "o2", "manifest/a"} {
		if refs(t, s, k) != 0 {
			t.Fatalf("%s: %d references after the topic's release", k, refs(t, s, k))
		}
	}
}

// uncertainKV fails its next transaction with ErrUncertain, applied or
// not.
type uncertainKV struct {
	metadata.KV
	mu           sync.Mutex
	armed, apply bool
}

func (k *uncertainKV) Txn(ctx context.Context, conds []metadata.Cond, ops []metadata.Op) (int64, error) {
	k.mu.Lock()
	armed, apply := k.armed, k.apply
	k.armed = false
	k.mu.Unlock()
	if !armed {
		return k.KV.Txn(ctx, conds, ops)
	}
	if apply {
		if _, err := k.KV.Txn(ctx, conds, ops); err != nil {
			return 0, err
		}
	}
	return 0, fmt.Errorf("injected: %w", metadata.ErrUncertain)
}

// An ambiguous fold is settled by reading the index back: applied is
// success; not applied is an uncertain error, with nothing changed and
// nothing retried.
func TestFoldSegmentsSettlesAnAmbiguousCommit(t *testing.T) {
	onBothBackends(t, func(t *testing.T, kv metadata.KV) {
		ctx := context.Background()
		ukv := &uncertainKV{KV: kv}
		s, id, m := foldFixture(t, ukv, 6)
		ukv.armed, ukv.apply = true, true
		if err := fold(t, s, m, id, 0, 3, "manifest/applied"); err != nil {
			t.Fatalf("a fold that applied: %v", err)
		}
		ukv.armed, ukv.apply = true, false
		err := fold(t, s, m, id, 3, 6, "manifest/lost")
		if !metadata.IsUncertain(err) {
			t.Fatalf("a fold that did not apply: %v, want an uncertain error", err)
		}
		segs, _ := s.Segments(ctx, id, 0, 0, 0)
		if len(segs) != 4 || !segs[0].Manifest || segs[1].Manifest {
			t.Fatalf("index: %+v", segs)
		}
		if ok, _ := s.ObjectKnown(ctx, "manifest/lost"); ok {
			t.Fatal("the manifest of a fold that did not apply is known")
		}
	})
}
