package metadata_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

// crashEtcdKV is an etcd KV (with its limits) whose transactions fail from
// the armed one on, as if the broker died there.
type crashEtcdKV struct {
	*etcdkv.KV
	left atomic.Int64 // transactions still allowed; negative: no crash armed
}

func (k *crashEtcdKV) Txn(ctx context.Context, conds []metadata.Cond, ops []metadata.Op) (int64, error) {
	if k.left.Add(-1) == -1 {
		k.left.Store(0) // stays crashed
		return 0, errCrash
	}
	return k.KV.Txn(ctx, conds, ops)
}

// On a real etcd with its default limits: a topic of 1,000 partitions is
// created, grown to 1,500 and deleted, and nothing of it is left after the
// deleted topics are released.
func TestEtcdLargeTopicLifecycle(t *testing.T) {
	ctx := context.Background()
	endpoint, _ := etcdtest.Start(t)
	kv := etcdtest.OpenKV(t, endpoint, "large")
	s := metadata.NewStore(kv)
	id := metadata.NewTopicID()
	if err := s.CreateTopic(ctx, metadata.Topic{Name: "large", ID: id, Partitions: 1000}); err != nil {
		t.Fatal(err)
	}
	checkTopic(t, s, kv, "large", id, 1000)
	old, _, _ := s.Topic(ctx, "large")
	grown := old
	grown.Partitions = 1500
	if err := s.UpdateTopic(ctx, old, grown); err != nil {
		t.Fatal(err)
	}
	checkTopic(t, s, kv, "large", id, 1500)
	cur, _, _ := s.Topic(ctx, "large")
	if err := s.DeleteTopic(ctx, cur); err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseDeletedTopics(ctx, 0); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"topics/", "parts/", "pending-topics/", "deleted-topics/"} {
		if n := keysUnder(t, kv, prefix); n != 0 {
			t.Fatalf("%d keys left under %s", n, prefix)
		}
	}
}

// On a real etcd, a broker that dies between the pieces of a split create
// leaves no visible topic; another broker's cleanup removes the leftovers,
// and the topic can then be created.
func TestEtcdSplitCreateCrash(t *testing.T) {
	ctx := context.Background()
	endpoint, _ := etcdtest.Start(t)
	dying := &crashEtcdKV{KV: etcdtest.OpenKV(t, endpoint, "crash")}
	dying.left.Store(4) // the pending record and three chunks of 1,000 partitions
	other := etcdtest.OpenKV(t, endpoint, "crash")
	s := metadata.NewStore(other)
	err := metadata.NewStore(dying).CreateTopic(ctx, metadata.Topic{Name: "t", ID: metadata.NewTopicID(), Partitions: 1000})
	if !errors.Is(err, errCrash) {
		t.Fatalf("create: %v, want the crash", err)
	}
	if tops, err := s.Topics(ctx); err != nil || len(tops) != 0 {
		t.Fatalf("topics after the crash: %+v err=%v", tops, err)
	}
	if n := keysUnder(t, other, "parts/"); n != 3*128 {
		t.Fatalf("%d partition states left by the crash, want %d", n, 3*128)
	}
	if err := s.ReleasePendingTopics(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if n := keysUnder(t, other, "parts/") + keysUnder(t, other, "pending-topics/"); n != 0 {
		t.Fatalf("%d keys left after the cleanup", n)
	}
	id := metadata.NewTopicID()
	if err := s.CreateTopic(ctx, metadata.Topic{Name: "t", ID: id, Partitions: 1000}); err != nil {
		t.Fatal(err)
	}
	checkTopic(t, s, other, "t", id, 1000)
}
