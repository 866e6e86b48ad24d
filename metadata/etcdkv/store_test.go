package etcdkv_test

import (
	"context"
	"testing"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

// TestEtcdStore runs representative Store operations over etcd with its
// default limits: a topic of many partitions, one object committed to 40
// partitions with a producer delta each, producer states before and after a
// fold, and a consumer group's record and offsets.
func TestEtcdStore(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	s := metadata.NewStore(etcdtest.OpenKV(t, endpoint, "store"))
	ctx := context.Background()
	const parts = 40
	id := metadata.NewTopicID()
	if err := s.CreateTopic(ctx, metadata.Topic{Name: "orders", ID: id, Partitions: 100}); err != nil {
		t.Fatal(err)
	}
	for round := range int64(3) {
		commits := make([]metadata.SegmentCommit, parts)
		for p := range commits {
			base := round * 10
			commits[p] = metadata.SegmentCommit{
				Segment: metadata.Segment{Topic: id, Partition: int32(p), BaseOffset: base, EndOffset: base + 10,
					Object: "obj-" + string(rune('a'+round)), Pos: int64(p) * 100, Len: 100},
				Producers: []metadata.ProducerState{{ID: 1000 + int64(p), Epoch: 2, LastTimeMs: round,
					Batches: []metadata.ProducerBatch{{FirstSeq: int32(round * 10), LastSeq: int32(round*10 + 9),
						BaseOffset: base, LastOffset: base + 9}}}},
			}
		}
		if skipped, err := s.CommitSegments(ctx, commits); err != nil || len(skipped) != 0 {
			t.Fatalf("commit round %d: skipped=%v err=%v", round, skipped, err)
		}
	}
	if st, ok, err := s.PartitionState(ctx, id, parts-1); err != nil || !ok || st.NextOffset != 30 {
		t.Fatalf("partition %d: %+v ok=%v err=%v", parts-1, st, ok, err)
	}
	if seg, ok, err := s.FloorSegment(ctx, id, 7, 25); err != nil || !ok || seg.Object != "obj-c" {
		t.Fatalf("floor segment: %+v ok=%v err=%v", seg, ok, err)
	}
	checkProducerFold(t, s, id)
	checkGroups(t, s)
	topic, _, _ := s.Topic(ctx, "orders")
	if err := s.DeleteTopic(ctx, topic); err != nil {
		t.Fatal(err)
	}
}

func checkProducerFold(t *testing.T, s *metadata.Store, id metadata.TopicID) {
	ctx := context.Background()
	before, err := s.ProducerStates(ctx, id, 3)
	if err != nil || len(before) != 1 || before[0].ID != 1003 {
		t.Fatalf("producer states: %+v err=%v", before, err)
	}
	if n, err := s.FoldProducers(ctx, id, 3, 1, 0); err != nil || n != 3 {
		t.Fatalf("fold: %d deltas, err=%v", n, err)
	}
	after, err := s.ProducerStates(ctx, id, 3)
	if err != nil || len(after) != 1 || after[0].ID != 1003 || after[0].Epoch != 2 {
		t.Fatalf("producer states after fold: %+v err=%v", after, err)
	}
}

func checkGroups(t *testing.T, s *metadata.Store) {
	ctx := context.Background()
	fence, err := s.ClaimGroups(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var offsets []metadata.OffsetWrite
	for p := range int32(100) {
		offsets = append(offsets, metadata.OffsetWrite{GroupPartition: metadata.GroupPartition{Topic: "orders", Partition: p},
			Offset: &metadata.CommittedOffset{Offset: int64(p), LeaderEpoch: -1}})
	}
	writes := []metadata.GroupWrite{{Group: "g", Record: &metadata.GroupRecord{ProtocolType: "consumer", Generation: 1}, Offsets: offsets}}
	if _, err := s.WriteGroups(ctx, fence, map[string]int64{}, writes); err != nil {
		t.Fatal(err)
	}
	groups, err := s.LoadGroups(ctx)
	if err != nil || len(groups) != 1 || len(groups[0].Offsets) != 100 || groups[0].Record.Generation != 1 {
		t.Fatalf("load groups: %+v err=%v", groups, err)
	}
	if _, err := s.ClaimGroups(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteGroups(ctx, fence, map[string]int64{"g": groups[0].Version}, writes); !metadata.IsConflict(err) {
		t.Fatalf("write under a stale fence: err=%v, want conflict", err)
	}
}
