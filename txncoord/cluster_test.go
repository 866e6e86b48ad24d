package txncoord

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

// clusterNode is a coordinator of a cluster with its own fencer.
type clusterNode struct {
	c     *Coordinator
	fence *fakeFencer
}

func (e *env) openNode(meta *metadata.Store) clusterNode {
	f := &fakeFencer{}
	cfg := e.config()
	cfg.Meta, cfg.Fencer = meta, f
	return clusterNode{c: e.openWith(cfg), fence: f}
}

// take gives the shard of id to n (a new fence) and acquires it.
func (e *env) take(n clusterNode, id string) {
	e.t.Helper()
	takeShard(e.t, e.kv, n.fence, ShardOf(id))
	if err := n.c.AcquireShard(context.Background(), ShardOf(id)); err != nil {
		e.t.Fatalf("acquire: %v", err)
	}
}

// TestStaleShardOwner, on bbolt and on etcd: a shard moves from A to B
// while A still believes it owns it (its fencer gives the old fence). A
// can write nothing: its AddPartitions, EndTxn and InitProducerId fail
// with NOT_COORDINATOR and B finds the record as A last stored it. B
// resumes A's Prepare* with a higher coordinator epoch.
func TestStaleShardOwner(t *testing.T) {
	t.Run("bbolt", func(t *testing.T) {
		kv, err := metadata.OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
		if err != nil {
			t.Fatal(err)
		}
		e := newEnvOn(t, kv)
		staleOwner(t, e, e.meta, e.meta)
	})
	t.Run("etcd", func(t *testing.T) {
		endpoint, _ := etcdtest.Start(t)
		e := newEnvOn(t, etcdtest.OpenKV(t, endpoint, "sediment"))
		other := metadata.NewStore(etcdtest.OpenKV(t, endpoint, "sediment"))
		staleOwner(t, e, e.meta, other)
	})
}

func staleOwner(t *testing.T, e *env, metaA, metaB *metadata.Store) {
	ctx := context.Background()
	a, b := e.openNode(metaA), e.openNode(metaB)
	_, err := a.c.InitProducerID(ctx, InitRequest{TransactionalID: "tx", TimeoutMs: 1000, ProducerID: -1, ProducerEpoch: -1})
	wantErr(t, "init before any shard is owned", err, kerr.NotCoordinator)
	e.take(a, "tx")
	p := initID(t, a.c, "tx")
	wantErr(t, "add on A", addParts(a.c, "tx", p, tp("t", 0)), nil)
	doneID := sameShard("tx")
	done := initID(t, a.c, doneID)
	e.markers.setBlocked(true)
	wantErr(t, "add done", addParts(a.c, doneID, done, tp("t", 1)), nil)
	wantErr(t, "commit done on A", a.c.EndTxn(ctx, doneID, done.ProducerID, done.ProducerEpoch, true), nil)

	// B takes the shard; A's fencer does not know yet.
	e.take(b, "tx")

	wantErr(t, "A adds after the move", addParts(a.c, "tx", p, tp("t", 2)), kerr.NotCoordinator)
	wantErr(t, "A ends after the move", a.c.EndTxn(ctx, "tx", p.ProducerID, p.ProducerEpoch, true), kerr.NotCoordinator)
	_, err = a.c.InitProducerID(ctx, InitRequest{TransactionalID: "tx", TimeoutMs: 1000, ProducerID: -1, ProducerEpoch: -1})
	wantErr(t, "A inits after the move", err, kerr.NotCoordinator)
	wantErr(t, "A describes after the move", describe(a.c, "tx").Err, kerr.NotCoordinator)
	e.markers.setBlocked(false) // A dropped the shard at its failed write: only B writes markers

	d := describe(b.c, "tx")
	if d.Err != nil || d.State != Ongoing || d.ProducerEpoch != p.ProducerEpoch || len(d.Partitions) != 1 || d.Partitions[0] != tp("t", 0) {
		t.Fatalf("B's record: %+v", d)
	}
	waitState(t, b.c, doneID, CompleteCommit)
	var epochs []int32
	for _, m := range e.markers.written() {
		epochs = append(epochs, m.CoordinatorEpoch)
	}
	if len(epochs) != 1 || epochs[0] != 1 {
		t.Fatalf("coordinator epochs of the markers written: %v, want only B's 1", epochs)
	}
	wantErr(t, "B commits", b.c.EndTxn(ctx, "tx", p.ProducerID, p.ProducerEpoch, true), nil)
	waitState(t, b.c, "tx", CompleteCommit)
}

// sameShard returns another transactional id of id's shard.
func sameShard(id string) string {
	for i := range 10_000 {
		if other := fmt.Sprintf("%s-%d", id, i); ShardOf(other) == ShardOf(id) {
			return other
		}
	}
	panic("no id in the same shard")
}

// TestReleaseAndDrop: a released shard answers NOT_COORDINATOR and its
// next owner resumes its Prepare* transactions; a dropped one too.
func TestReleaseAndDrop(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	a, b := e.openNode(e.meta), e.openNode(e.meta)
	e.take(a, "tx")
	p := initID(t, a.c, "tx")
	wantErr(t, "add", addParts(a.c, "tx", p, tp("t", 0)), nil)
	e.markers.setBlocked(true)
	wantErr(t, "commit", a.c.EndTxn(ctx, "tx", p.ProducerID, p.ProducerEpoch, false), nil)
	if err := a.c.ReleaseShard(ctx, ShardOf("tx")); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "after release", a.c.EndTxn(ctx, "tx", p.ProducerID, p.ProducerEpoch, false), kerr.NotCoordinator)
	if len(a.c.List(ListFilter{})) != 0 {
		t.Fatal("a released shard is listed")
	}
	e.markers.setBlocked(false)
	e.take(b, "tx")
	waitState(t, b.c, "tx", CompleteAbort)

	b.c.DropShard(ShardOf("tx"))
	wantErr(t, "after drop", b.c.EndTxn(ctx, "tx", p.ProducerID, p.ProducerEpoch, false), kerr.NotCoordinator)
	e.take(a, "tx")
	wantErr(t, "abort retried on A again", a.c.EndTxn(ctx, "tx", p.ProducerID, p.ProducerEpoch, false), nil)
	if err := a.c.AcquireShard(ctx, ShardOf("tx")); err != nil {
		t.Fatalf("acquire again under the same fence: %v", err)
	}
	if err := a.c.AcquireShard(ctx, 64); err == nil {
		t.Fatal("shard 64 acquired")
	}
}

// TestOneNodeClaim: a second one-node coordinator opened on the same
// store fences the first: the first's next write fails with
// NOT_COORDINATOR and changes nothing, and the second serves the id.
func TestOneNodeClaim(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	a := e.open()
	p := initID(t, a, "tx")
	b := e.open()
	wantErr(t, "first coordinator adds", addParts(a, "tx", p, tp("t", 0)), kerr.NotCoordinator)
	wantErr(t, "first coordinator after its fence failed", a.EndTxn(ctx, "tx", p.ProducerID, p.ProducerEpoch, true), kerr.NotCoordinator)
	if d := describe(b, "tx"); d.Err != nil || d.State != Empty || d.ProducerID != p.ProducerID {
		t.Fatalf("second coordinator: %+v", d)
	}
	wantErr(t, "second coordinator adds", addParts(b, "tx", p, tp("t", 0)), nil)
}
