package partition

import (
	"context"
	"testing"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv"
)

// acquireKeeping acquires p for l as the cluster does: the own key is
// written by metadata.AcquirePartitionKeeping with what l kept, on a
// lease of its own, and the epoch it started is what l then serves.
func acquireKeeping(t *testing.T, c *cluster, l *Log, own *fakeOwnership, p *Partition) {
	t.Helper()
	ctx := context.Background()
	lease, err := c.shared.(*etcdkv.KV).Client().Grant(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	meta := metadata.NewStore(c.shared)
	fence, _, err := meta.AcquirePartitionKeeping(ctx, p.topic.ID, p.index, int32(own.node), int64(lease.ID), l.Kept(p.topic.ID, p.index))
	if err != nil {
		t.Fatalf("acquire %s/%d: %v", p.topic.Name, p.index, err)
	}
	own.mu.Lock()
	own.fences[metadata.PartitionKey{Topic: p.topic.ID, Partition: p.index}] = fence
	own.mu.Unlock()
	if err := l.Acquire(ctx, p.topic.ID, p.index); err != nil {
		t.Fatalf("acquire %s/%d: %v", p.topic.Name, p.index, err)
	}
}

// loseKey ends own's ownership of p the way a lost session does: the own
// key goes, and the log drops the partition (keeping its WAL batches).
func loseKey(t *testing.T, c *cluster, l *Log, own *fakeOwnership, p *Partition) {
	t.Helper()
	fence, _ := own.Fence(p.topic.ID, p.index)
	if err := metadata.NewStore(c.shared).ReleasePartition(context.Background(), fence); err != nil {
		t.Fatal(err)
	}
	own.lose(p.topic.ID, p.index)
	l.Drop(p.topic.ID, p.index)
}

// TestKeptBatchesKeepTheirEpoch (wal durability): batches an owner kept
// across the loss of its partition commit, when it owns the partition
// again, with the epoch they were served in, and the new epoch starts at
// their end: OffsetForLeaderEpoch of their epoch answers their end, so a
// consumer that read them sees no divergence.
func TestKeptBatchesKeepTheirEpoch(t *testing.T) {
	c := newEtcdCluster(t)
	eA, ownA := c.broker(1, nil)
	a := eA.open()
	p := createTopic(t, a, "t", 1, nil).Partition(0)
	acquireKeeping(t, c, a, ownA, p)
	old := p.LeaderEpoch()
	produce(t, a, p, idem(0, "a0"))
	produce(t, a, p, idem(1, "a1"))
	loseKey(t, c, a, ownA, p)

	acquireKeeping(t, c, a, ownA, p)
	v := p.EpochView()
	if cur := v.Current(); cur.Epoch <= old || cur.StartOffset != 2 || v.LogEnd != 2 {
		t.Fatalf("after acquiring with [0,2) kept in epoch %d: current epoch %+v, log end %d; want a new epoch from 2", old, cur, v.LogEnd)
	}
	if epoch, end := v.Epochs.EndOffsetFor(old, v.LogEnd); epoch != old || end != 2 {
		t.Fatalf("OffsetForLeaderEpoch(%d) = epoch %d end %d, want %d end 2: a consumer at the kept end diverges", old, epoch, end, old)
	}
	produce(t, a, p, idem(2, "a2"))
	uploadAll(t, a)
	if n := committedNext(t, eA.meta, p); n != 3 {
		t.Fatalf("committed next offset %d, want 3", n)
	}
	checkOwnedValues(t, a, p, []string{"a0", "a1", "a2"})
	h, err := eA.meta.LeaderEpochs(context.Background(), p.topic.ID, 0)
	if err != nil || h.Current() != v.Current() {
		t.Fatalf("metadata's epochs %+v (err %v), want current %+v", h, err, v.Current())
	}
}

// TestTakenOverKeptBatchesDropped (wal durability): a broker dies with
// acknowledged batches in its WAL only; the operator's takeover fences the
// partition at its committed offset; the broker comes back before anyone
// else has committed on the partition and acquires it again. Its kept
// batches must not commit (the takeover reported them lost): they are
// dropped, and the log goes on from the committed offset, in a new epoch.
func TestTakenOverKeptBatchesDropped(t *testing.T) {
	c := newEtcdCluster(t)
	eA, ownA := c.broker(1, nil)
	a := eA.open()
	p := createTopic(t, a, "t", 1, nil).Partition(0)
	acquireKeeping(t, c, a, ownA, p)
	produce(t, a, p, idem(0, "a0"))
	uploadAll(t, a)
	produce(t, a, p, idem(1, "lost1"))
	produce(t, a, p, idem(2, "lost2"))
	fence, _ := ownA.Fence(p.topic.ID, 0)
	eA.crash(a, false)
	ctx := context.Background()
	meta := metadata.NewStore(c.shared)
	if err := meta.ReleasePartition(ctx, fence); err != nil { // the lease ended
		t.Fatal(err)
	}
	ownA.lose(p.topic.ID, 0)

	from, err := meta.TakeOverPartition(ctx, p.topic.ID, 0, nil)
	if err != nil || from != 1 {
		t.Fatalf("take over: from %d err %v, want 1", from, err)
	}

	a = c.reopen(eA) // the WAL replays lost1 and lost2 as kept batches
	tp, _ := a.Topic("t")
	p = tp.Partition(0)
	if k := a.Kept(p.topic.ID, 0); k.Start != 1 || k.End != 3 {
		t.Fatalf("kept after reopen: %+v, want [1,3)", k)
	}
	acquireKeeping(t, c, a, ownA, p)
	uploadAll(t, a)
	if n := committedNext(t, eA.meta, p); n != 1 {
		t.Fatalf("committed next offset %d after the takeover, want 1: the kept batches committed", n)
	}
	if cur := p.EpochView().Current(); cur.StartOffset != 1 {
		t.Fatalf("current epoch %+v, want one starting at the committed offset 1", cur)
	}
	produce(t, a, p, idem(1, "b1")) // the producer state is the committed one again
	uploadAll(t, a)
	checkOwnedValues(t, a, p, []string{"a0", "b1"})

	fence, _ = ownA.Fence(p.topic.ID, 0)
	eA.crash(a, false) // the dropped batches' frames must not come back
	if err := meta.ReleasePartition(ctx, fence); err != nil {
		t.Fatal(err)
	}
	ownA.lose(p.topic.ID, 0)
	a = c.reopen(eA)
	tp, _ = a.Topic("t")
	p = tp.Partition(0)
	acquireKeeping(t, c, a, ownA, p)
	uploadAll(t, a)
	checkOwnedValues(t, a, p, []string{"a0", "b1"})
}

// TestAcquireRestartsAnEpochStartedPastTheLog: should an acquisition start
// the epoch at the end of batches the log does not keep after all, the log
// starts another one where its appends go, so that no batch is stamped
// with an epoch the history starts later.
func TestAcquireRestartsAnEpochStartedPastTheLog(t *testing.T) {
	c := newEtcdCluster(t)
	eA, ownA := c.broker(1, nil)
	a := eA.open()
	p := createTopic(t, a, "t", 1, nil).Partition(0)
	ctx := context.Background()
	lease, err := c.shared.(*etcdkv.KV).Client().Grant(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	told := metadata.KeptBatches{Start: 0, End: 5, Epochs: []metadata.EpochEntry{{Epoch: 0, StartOffset: 0}}}
	fence, _, err := metadata.NewStore(c.shared).AcquirePartitionKeeping(ctx, p.topic.ID, 0, 1, int64(lease.ID), told)
	if err != nil {
		t.Fatal(err)
	}
	ownA.mu.Lock()
	ownA.fences[metadata.PartitionKey{Topic: p.topic.ID, Partition: 0}] = fence
	ownA.mu.Unlock()
	if err := a.Acquire(ctx, p.topic.ID, 0); err != nil {
		t.Fatal(err)
	}
	cur := p.EpochView().Current()
	if cur.StartOffset != 0 {
		t.Fatalf("current epoch %+v, want one starting at the log end 0", cur)
	}
	res := produce(t, a, p, idem(0, "a0"))
	if res.BaseOffset != 0 || p.LeaderEpoch() != cur.Epoch {
		t.Fatalf("append at %d in epoch %d, want 0 in epoch %d", res.BaseOffset, p.LeaderEpoch(), cur.Epoch)
	}
	if h, err := eA.meta.LeaderEpochs(ctx, p.topic.ID, 0); err != nil || h.Current() != cur {
		t.Fatalf("metadata's epochs %+v (err %v), want current %+v", h, err, cur)
	}
}

// TestDropSupersededKeptBatches (wal durability): kept batches of a
// partition not owned here stay while they continue its log (their owner
// may come back for them), and are dropped once a takeover fenced them,
// before this broker owns the partition again, so that they no longer
// hold the WAL; should a restart replay them before the WAL let go of
// their frame, they are still superseded, and never commit.
func TestDropSupersededKeptBatches(t *testing.T) {
	c := newEtcdCluster(t)
	eA, ownA := c.broker(1, nil)
	a := eA.open()
	p := createTopic(t, a, "t", 1, nil).Partition(0)
	acquireKeeping(t, c, a, ownA, p)
	produce(t, a, p, idem(0, "a0"))
	uploadAll(t, a)
	produce(t, a, p, idem(1, "lost1"))
	loseKey(t, c, a, ownA, p)
	ctx := context.Background()

	if err := a.DropSuperseded(ctx); err != nil {
		t.Fatal(err)
	}
	if k := a.Kept(p.topic.ID, 0); k.Start != 1 || k.End != 2 {
		t.Fatalf("kept batches that still continue the log were dropped: kept %+v, want [1,2)", k)
	}
	if _, err := metadata.NewStore(c.shared).TakeOverPartition(ctx, p.topic.ID, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.DropSuperseded(ctx); err != nil {
		t.Fatal(err)
	}
	if k := a.Kept(p.topic.ID, 0); k.End > k.Start {
		t.Fatalf("kept batches fenced by a takeover stay: %+v", k)
	}
	uploadOwned(t, a)

	eA.crash(a, false)
	a = c.reopen(eA)
	tp, _ := a.Topic("t")
	p = tp.Partition(0)
	acquireKeeping(t, c, a, ownA, p)
	uploadAll(t, a)
	if n := committedNext(t, eA.meta, p); n != 1 {
		t.Fatalf("committed next offset %d, want 1: the superseded batch committed", n)
	}
	checkOwnedValues(t, a, p, []string{"a0"})
}
