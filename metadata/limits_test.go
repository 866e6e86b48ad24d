package metadata_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/sediment-io/sediment/metadata"
)

// A retention or DeleteRecords that removes 300 segments at once (two
// partitions' segments share each object) stays within etcd's limits: the
// segments go in chunks, the log start ends past them, and each object
// becomes garbage once neither partition references it.
func TestDeleteSegmentsWithinLimits(t *testing.T) {
	ctx := context.Background()
	s, kv := newSplitStore(t)
	id := metadata.NewTopicID()
	if err := s.CreateTopic(ctx, metadata.Topic{Name: "t", ID: id, Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	const n = 300
	for i := range int64(n) {
		var commits []metadata.SegmentCommit
		for p := range int32(2) {
			commits = append(commits, metadata.SegmentCommit{Segment: metadata.Segment{Topic: id, Partition: p,
				BaseOffset: i, EndOffset: i + 1, Object: fmt.Sprintf("obj-%03d", i), Pos: int64(p), Len: 1}})
		}
		if _, err := s.CommitSegments(ctx, commits); err != nil {
			t.Fatal(err)
		}
	}
	for p := range int32(2) {
		segs, err := s.Segments(ctx, id, p, 0, 0)
		if err != nil || len(segs) != n {
			t.Fatalf("partition %d: %d segments, err %v", p, len(segs), err)
		}
		if err := s.DeleteSegments(ctx, id, p, segs, n+5, 0); err != nil {
			t.Fatalf("partition %d: %v", p, err)
		}
		st, _, _ := s.PartitionState(ctx, id, p)
		if st.LogStartOffset != n+5 {
			t.Fatalf("partition %d: log start %d", p, st.LogStartOffset)
		}
		wantObjects := map[int32]int{0: n, 1: 0}[p] // still referenced by partition 1, then by none
		if got := keysUnder(t, kv, "objects/"); got != wantObjects {
			t.Fatalf("after partition %d: %d object records, want %d", p, got, wantObjects)
		}
	}
	if got := keysUnder(t, kv, "index/"); got != 0 {
		t.Fatalf("%d index entries left", got)
	}
	if got := keysUnder(t, kv, "garbage/"); got != n {
		t.Fatalf("%d garbage records, want %d", got, n)
	}
}

// The metrics wrapper the broker puts around its KV keeps the backend's
// limits visible, so that the Store still splits what would not fit.
func TestInstrumentedKVKeepsItsLimits(t *testing.T) {
	_, kv := newSplitStore(t)
	s := metadata.NewStore(metadata.Instrument(kv, nil))
	if got := s.TxnLimits(); got != kv.TxnLimits() {
		t.Fatalf("limits through the metrics wrapper: %+v, want %+v", got, kv.TxnLimits())
	}
	if err := s.CreateTopic(context.Background(), metadata.Topic{Name: "t", ID: metadata.NewTopicID(), Partitions: 500}); err != nil {
		t.Fatal(err)
	}
}
