package etcdkv_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

func grant(t *testing.T, kv *etcdkv.KV) int64 {
	t.Helper()
	resp, err := kv.Client().Grant(context.Background(), 30)
	if err != nil {
		t.Fatal(err)
	}
	return int64(resp.ID)
}

// TestAcquirePartition: one owner at a time, each with a new leader epoch
// starting at the committed next offset; a stale fence commits nothing; a
// revoked lease frees the partition.
func TestAcquirePartition(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	kv := etcdtest.OpenKV(t, endpoint, "acquire")
	s := metadata.NewStore(kv)
	ctx := context.Background()
	topic := metadata.Topic{Name: "t", ID: metadata.NewTopicID(), Partitions: 2}
	if err := s.CreateTopic(ctx, topic); err != nil {
		t.Fatal(err)
	}
	commit := metadata.SegmentCommit{Segment: metadata.Segment{Topic: topic.ID, Partition: 0, BaseOffset: 0, EndOffset: 5, Object: "o", Len: 10}}
	if _, err := s.CommitSegments(ctx, []metadata.SegmentCommit{commit}); err != nil {
		t.Fatal(err)
	}
	l1, l2 := grant(t, kv), grant(t, kv)
	f1, e1, err := s.AcquirePartition(ctx, topic.ID, 0, 1, l1)
	if err != nil || e1 != 1 || f1.Key != metadata.OwnerKey(topic.ID, 0) || f1.Version == 0 {
		t.Fatalf("first acquire: fence=%+v epoch=%d err=%v", f1, e1, err)
	}
	if h, _ := s.LeaderEpochs(ctx, topic.ID, 0); h.Current() != (metadata.EpochEntry{Epoch: 1, StartOffset: 5}) {
		t.Fatalf("epoch history after acquire: %+v", h)
	}
	if _, _, err := s.AcquirePartition(ctx, topic.ID, 0, 2, l2); !metadata.IsConflict(err) {
		t.Fatalf("acquire of an owned partition: err=%v, want conflict", err)
	}
	if _, _, err := s.AcquirePartition(ctx, topic.ID, 9, 2, l2); !errors.Is(err, metadata.ErrUnknownTopic) {
		t.Fatalf("acquire of a missing partition: err=%v", err)
	}
	if err := s.ReleasePartition(ctx, f1); err != nil {
		t.Fatal(err)
	}
	f2, e2, err := s.AcquirePartition(ctx, topic.ID, 0, 2, l2)
	if err != nil || e2 != 2 || f2.Version <= f1.Version {
		t.Fatalf("acquire after release: fence=%+v epoch=%d err=%v", f2, e2, err)
	}
	if err := s.ReleasePartition(ctx, f1); !metadata.IsConflict(err) {
		t.Fatalf("release with a stale fence: err=%v, want conflict", err)
	}
	if _, err := kv.Txn(ctx, []metadata.Cond{f1}, []metadata.Op{metadata.Put("x", nil)}); !metadata.IsConflict(err) {
		t.Fatalf("write under the old owner's fence: err=%v, want conflict", err)
	}
	if _, err := kv.Client().Revoke(ctx, clientv3.LeaseID(l2)); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Txn(ctx, []metadata.Cond{f2}, []metadata.Op{metadata.Put("x", nil)}); !metadata.IsConflict(err) {
		t.Fatalf("write under the fence of a revoked lease: err=%v, want conflict", err)
	}
	if _, e3, err := s.AcquirePartition(ctx, topic.ID, 0, 1, l1); err != nil || e3 != 3 {
		t.Fatalf("acquire after the owner's lease ended: epoch=%d err=%v", e3, err)
	}
}

// TestAcquireShard: one owner at a time; a release with a stale fence
// fails; a revoked lease frees the shard.
func TestAcquireShard(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	kv := etcdtest.OpenKV(t, endpoint, "shards")
	s := metadata.NewStore(kv)
	ctx := context.Background()
	l1, l2 := grant(t, kv), grant(t, kv)
	f1, err := s.AcquireShard(ctx, 7, 1, l1)
	if err != nil || f1.Key != metadata.ShardOwnerKey(7) {
		t.Fatalf("acquire: %+v %v", f1, err)
	}
	if _, err := s.AcquireShard(ctx, 7, 2, l2); !metadata.IsConflict(err) {
		t.Fatalf("second owner: err=%v, want conflict", err)
	}
	if _, err := kv.Client().Revoke(ctx, clientv3.LeaseID(l1)); err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseShard(ctx, f1); !metadata.IsConflict(err) {
		t.Fatalf("release after the lease ended: err=%v, want conflict", err)
	}
	f2, err := s.AcquireShard(ctx, 7, 2, l2)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseShard(ctx, f2); err != nil {
		t.Fatal(err)
	}
}

// uncertainKV answers the next Txn with ErrUncertain, after applying it
// (applied) or not.
type uncertainKV struct {
	metadata.KV
	next    atomic.Int32 // 0: pass through, 1: apply then fail, 2: fail without applying
	applied atomic.Int32
}

func (u *uncertainKV) Txn(ctx context.Context, conds []metadata.Cond, ops []metadata.Op) (int64, error) {
	switch u.next.Swap(0) {
	case 1:
		if _, err := u.KV.Txn(ctx, conds, ops); err != nil {
			return 0, err
		}
		u.applied.Add(1)
		return 0, fmt.Errorf("test: answer lost: %w", metadata.ErrUncertain)
	case 2:
		return 0, fmt.Errorf("test: request lost: %w", metadata.ErrUncertain)
	}
	return u.KV.Txn(ctx, conds, ops)
}

// TestAcquireUncertain: an acquire whose answer was lost is settled by
// reading the own key back: applied, its fence is the key's version; not
// applied, it is sent again under the same conditions. A release whose
// answer was lost counts as done.
func TestAcquireUncertain(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	kv := etcdtest.OpenKV(t, endpoint, "uncertain-own")
	u := &uncertainKV{KV: kv}
	s := metadata.NewStore(u)
	ctx := context.Background()
	topic := metadata.Topic{Name: "t", ID: metadata.NewTopicID(), Partitions: 1}
	if err := s.CreateTopic(ctx, topic); err != nil {
		t.Fatal(err)
	}
	lease := grant(t, kv)
	for _, mode := range []int32{1, 2} {
		u.next.Store(mode)
		fence, epoch, err := s.AcquirePartition(ctx, topic.ID, 0, 1, lease)
		if err != nil {
			t.Fatalf("mode %d: %v", mode, err)
		}
		it, ok, _ := kv.Get(ctx, fence.Key)
		if !ok || it.Version != fence.Version {
			t.Fatalf("mode %d: fence %+v, key at %d (present %v)", mode, fence, it.Version, ok)
		}
		if h, _ := s.LeaderEpochs(ctx, topic.ID, 0); h.Current().Epoch != epoch {
			t.Fatalf("mode %d: epoch %d, history %+v", mode, epoch, h)
		}
		u.next.Store(mode)
		if err := s.ReleasePartition(ctx, fence); err != nil {
			t.Fatalf("mode %d: release: %v", mode, err)
		}
		if _, ok, _ := kv.Get(ctx, fence.Key); ok {
			t.Fatalf("mode %d: own key still there after release", mode)
		}
	}
	// A shard: applied, the fence is read back; not applied, the caller
	// learns it did not get the shard (and tries again on its next pass).
	u.next.Store(1)
	fence, err := s.AcquireShard(ctx, 9, 1, lease)
	if it, ok, _ := kv.Get(ctx, metadata.ShardOwnerKey(9)); err != nil || !ok || it.Version != fence.Version {
		t.Fatalf("shard, answer lost: fence %+v err=%v, key at %d", fence, err, it.Version)
	}
	u.next.Store(2)
	if _, err := s.AcquireShard(ctx, 10, 1, lease); !metadata.IsUncertain(err) {
		t.Fatalf("shard, request lost: err=%v, want the unknown outcome reported", err)
	}
	if _, ok, _ := kv.Get(ctx, metadata.ShardOwnerKey(10)); ok {
		t.Fatal("shard 10 owned although its request was lost")
	}
	if u.applied.Load() != 3 {
		t.Fatalf("%d transactions applied before their answer was lost, want 3", u.applied.Load())
	}
}
