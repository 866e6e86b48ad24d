package etcdkv_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

// TestAcquireKeepingStartsEpochAtKeptEnd: an owner that comes back with
// batches it kept past the committed offset starts its new epoch at their
// end, so that OffsetForLeaderEpoch of the epoch they carry answers their
// end (no divergence for a consumer that read them); a takeover then
// starts an epoch at the committed offset, and the same owner's kept
// batches no longer count: its next epoch starts at the committed offset.
func TestAcquireKeepingStartsEpochAtKeptEnd(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	kv := etcdtest.OpenKV(t, endpoint, "kept")
	s := metadata.NewStore(kv)
	ctx := context.Background()
	topic := metadata.Topic{Name: "t", ID: metadata.NewTopicID(), Partitions: 1}
	if err := s.CreateTopic(ctx, topic); err != nil {
		t.Fatal(err)
	}
	commit := metadata.SegmentCommit{Segment: metadata.Segment{Topic: topic.ID, Partition: 0, BaseOffset: 0, EndOffset: 5, Object: "o", Len: 10}}
	if _, err := s.CommitSegments(ctx, []metadata.SegmentCommit{commit}); err != nil {
		t.Fatal(err)
	}
	lease := grant(t, kv)
	f1, e1, err := s.AcquirePartition(ctx, topic.ID, 0, 1, lease)
	if err != nil || e1 != 1 {
		t.Fatalf("acquire: epoch=%d err=%v", e1, err)
	}
	if err := s.ReleasePartition(ctx, f1); err != nil {
		t.Fatal(err)
	}
	// Node 1 appended [5,9) in epoch 1 and lost the partition before
	// committing them.
	kept := metadata.KeptBatches{Start: 5, End: 9, Epochs: []metadata.EpochEntry{{Epoch: 1, StartOffset: 5}}}
	f2, e2, err := s.AcquirePartitionKeeping(ctx, topic.ID, 0, 1, lease, kept)
	if err != nil || e2 != 2 {
		t.Fatalf("acquire keeping [5,9): epoch=%d err=%v", e2, err)
	}
	h, err := s.LeaderEpochs(ctx, topic.ID, 0)
	if err != nil || h.Current() != (metadata.EpochEntry{Epoch: 2, StartOffset: 9}) {
		t.Fatalf("history after acquiring with kept batches: %+v err=%v", h, err)
	}
	if epoch, end := h.EndOffsetFor(1, 9); epoch != 1 || end != 9 {
		t.Fatalf("OffsetForLeaderEpoch(1) = %d@%d, want 1@9: a consumer at the kept end would see a divergence", epoch, end)
	}

	if _, err := s.TakeOverPartition(ctx, topic.ID, 0, nil); !metadata.IsConflict(err) || !strings.Contains(err.Error(), "owned by node 1") {
		t.Fatalf("take over of an owned partition: err=%v, want a conflict naming the owner", err)
	}
	if err := s.ReleasePartition(ctx, f2); err != nil {
		t.Fatal(err)
	}
	// Node 1 appended [9,12) in epoch 2 and died; the operator takes it
	// over while it is unregistered.
	if _, err := kv.Txn(ctx, nil, []metadata.Op{metadata.Put("brokers/live", []byte("x"))}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TakeOverPartition(ctx, topic.ID, 0, []metadata.Cond{{Key: "brokers/live"}}); !metadata.IsConflict(err) {
		t.Fatalf("take over while the broker is registered: err=%v, want conflict", err)
	}
	from, err := s.TakeOverPartition(ctx, topic.ID, 0, []metadata.Cond{{Key: "brokers/gone"}})
	if err != nil || from != 5 {
		t.Fatalf("take over: from=%d err=%v, want 5", from, err)
	}
	kept = metadata.KeptBatches{Start: 5, End: 12, Epochs: []metadata.EpochEntry{{Epoch: 1, StartOffset: 5}, {Epoch: 2, StartOffset: 9}}}
	if h, _ := s.LeaderEpochs(ctx, topic.ID, 0); kept.Continues(h, 5) {
		t.Fatalf("kept batches still continue the log after the takeover: %+v", h)
	}
	_, e4, err := s.AcquirePartitionKeeping(ctx, topic.ID, 0, 1, lease, kept)
	if err != nil || e4 != 4 {
		t.Fatalf("acquire after the takeover: epoch=%d err=%v", e4, err)
	}
	if h, _ := s.LeaderEpochs(ctx, topic.ID, 0); h.Current() != (metadata.EpochEntry{Epoch: 4, StartOffset: 5}) {
		t.Fatalf("history after the takeover and the acquire: %+v, want epoch 4 from 5", h)
	}
	if _, err := s.TakeOverPartition(ctx, topic.ID, 3, nil); !errors.Is(err, metadata.ErrUnknownTopic) {
		t.Fatalf("take over of a missing partition: err=%v", err)
	}
}
