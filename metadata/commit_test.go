package metadata_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/sediment-io/sediment/metadata"
)

// lostAnswerKV applies its next transaction and then reports an error, as
// an etcd client whose request timed out after the server applied it does.
type lostAnswerKV struct {
	metadata.KV
	lose atomic.Bool
}

func (k *lostAnswerKV) Txn(ctx context.Context, conds []metadata.Cond, ops []metadata.Op) (int64, error) {
	rev, err := k.KV.Txn(ctx, conds, ops)
	if err == nil && k.lose.Swap(false) {
		return 0, errors.New("injected: context deadline exceeded after the transaction applied")
	}
	return rev, err
}

// A commit whose transaction applied but whose answer was lost is settled
// by reading back that the object is indexed: it succeeds, and the next
// commit continues from it.
func TestCommitSegmentsSettlesALostAnswer(t *testing.T) {
	ctx := context.Background()
	bolt, err := metadata.OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	kv := &lostAnswerKV{KV: bolt}
	s := metadata.NewStore(kv)
	t.Cleanup(func() { s.Close() })
	id := committedTopic(t, s)
	kv.lose.Store(true)
	if _, err := s.CommitSegments(ctx, commitOf(id, 0, 10, 20, "b")); err != nil {
		t.Fatalf("commit whose answer was lost: %v", err)
	}
	if _, err := s.CommitSegments(ctx, commitOf(id, 0, 20, 30, "c")); err != nil {
		t.Fatalf("next commit: %v", err)
	}
	st, _, _ := s.PartitionState(ctx, id, 0)
	if st.NextOffset != 30 {
		t.Fatalf("next offset %d, want 30", st.NextOffset)
	}
}

// A gap names every partition that has one, writes nothing, and matches
// ErrOffsetGap; the other partitions then commit on their own.
func TestCommitSegmentsGapNamesEveryPartition(t *testing.T) {
	ctx := context.Background()
	s, _, _ := twoStores(t)
	id := metadata.NewTopicID()
	if err := s.CreateTopic(ctx, metadata.Topic{Name: "t", ID: id, Partitions: 4}); err != nil {
		t.Fatal(err)
	}
	var commits []metadata.SegmentCommit
	for p := range int32(4) {
		base := int64(0)
		if p == 1 || p == 3 {
			base = 5 // nothing committed before: a gap
		}
		commits = append(commits, commitOf(id, p, base, base+10, "o")...)
	}
	_, err := s.CommitSegments(ctx, commits)
	var gap *metadata.GapError
	if !errors.As(err, &gap) || !errors.Is(err, metadata.ErrOffsetGap) {
		t.Fatalf("err = %v, want a GapError matching ErrOffsetGap", err)
	}
	if len(gap.Partitions) != 2 || gap.Partitions[0].Partition != 1 || gap.Partitions[1].Partition != 3 {
		t.Fatalf("gap names %+v, want partitions 1 and 3", gap.Partitions)
	}
	if known, _ := s.ObjectKnown(ctx, "o"); known {
		t.Fatal("a commit with a gap wrote the object's record")
	}
	if _, err := s.CommitSegments(ctx, []metadata.SegmentCommit{commits[0], commits[2]}); err != nil {
		t.Fatalf("commit without the gaps: %v", err)
	}
}
