package metadata_test

import (
	"context"
	"testing"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

// On a real etcd, two brokers on one prefix: the first owns the partition
// and commits; the second takes the owner key between the first's plan and
// its transaction. The first's commit fails with a NotOwnerError naming the
// partition and writes nothing; the second's commit continues the log.
func TestEtcdCommitFencedBetweenPlanAndCommit(t *testing.T) {
	ctx := context.Background()
	endpoint, _ := etcdtest.Start(t)
	kvA := &fenceKV{KV: etcdtest.OpenKV(t, endpoint, "fence")}
	kvB := etcdtest.OpenKV(t, endpoint, "fence")
	a, b := metadata.NewStore(kvA), metadata.NewStore(kvB)
	id := committedTopic(t, a)
	key := ownKey(id, 0)
	fenceA := takeOwner(t, kvA, key)
	if _, err := a.CommitSegments(ctx, []metadata.SegmentCommit{fencedCommit(id, 0, 10, 20, "b", fenceA)}); err != nil {
		t.Fatalf("owner's commit: %v", err)
	}
	kvA.moveBefore.Store(&key) // broker B takes the key right before A's next transaction
	_, err := a.CommitSegments(ctx, []metadata.SegmentCommit{fencedCommit(id, 0, 20, 30, "zombie", fenceA)})
	wantNotOwner(t, err, metadata.PartitionKey{Topic: id, Partition: 0})
	checkNext(t, b, id, 0, 20)
	if known, err := b.ObjectKnown(ctx, "zombie"); err != nil || known {
		t.Fatalf("zombie object known=%v err=%v", known, err)
	}
	it, ok, err := kvB.Get(ctx, key)
	if err != nil || !ok {
		t.Fatalf("owner key: ok=%v err=%v", ok, err)
	}
	fenceB := metadata.Cond{Key: key, Version: it.Version}
	if _, err := b.CommitSegments(ctx, []metadata.SegmentCommit{fencedCommit(id, 0, 20, 25, "c", fenceB)}); err != nil {
		t.Fatalf("new owner's commit: %v", err)
	}
	checkNext(t, a, id, 0, 25)
}

// A fenced commit of an object of 32 partitions (the bound the broker sets
// on etcd), each with a producer delta, fits etcd's default limits: the
// fences add one condition per partition.
func TestEtcdFencedCommitFitsLimits(t *testing.T) {
	ctx := context.Background()
	endpoint, _ := etcdtest.Start(t)
	kv := etcdtest.OpenKV(t, endpoint, "limits")
	s := metadata.NewStore(kv)
	const parts = 32
	id := metadata.NewTopicID()
	if err := s.CreateTopic(ctx, metadata.Topic{Name: "t", ID: id, Partitions: parts}); err != nil {
		t.Fatal(err)
	}
	commits := make([]metadata.SegmentCommit, parts)
	for p := range int32(parts) {
		commits[p] = fencedCommit(id, p, 0, 10, "obj", takeOwner(t, kv, ownKey(id, p)))
	}
	if _, err := s.CommitSegments(ctx, commits); err != nil {
		t.Fatalf("fenced commit of %d partitions: %v", parts, err)
	}
	checkNext(t, s, id, parts-1, 10)
}
