package groupcoord

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/sediment-io/sediment/internal/testwait"
	"github.com/sediment-io/sediment/metadata"
)

// TestShardMovesUnderCommits: a shard moves back and forth between two
// coordinators (handed over, dropped past the deadline, or taken from an
// owner that never noticed) while a client commits ever larger offsets to
// whichever coordinator answers. Each new owner serves every commit
// acknowledged before it took the shard, and the last acknowledged commit
// is stored.
func TestShardMovesUnderCommits(t *testing.T) {
	t.Parallel()
	ce := newClusterEnv(t, nil)
	nodes := []*node{ce.openNode(1), ce.openNode(2)}
	shard := ShardOf("g")
	ce.take(nodes[0], shard)
	stop := make(chan struct{})
	var acked atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		commitUntil(nodes, &acked, stop)
	}()
	for i := range 30 {
		from, to := nodes[i%2], nodes[(i+1)%2]
		switch i % 3 {
		case 0: // a hand-over
			if err := from.c.ReleaseShard(context.Background(), shard); err != nil {
				t.Fatal(err)
			}
		case 1: // the old owner passed its deadline
			from.fence.clear(shard)
		}
		before := acked.Load()
		ce.take(to, shard)
		res := recv(t, to.c.FetchOffsets(FetchRequest{Group: "g", Topics: []FetchTopic{{Topic: "t", Partitions: []int32{0}}}}))
		if res.Err != nil || (before > 0 && res.Topics[0].Partitions[0].Offset < before) {
			t.Fatalf("move %d: the new owner serves %+v, %d was acknowledged before", i, res, before)
		}
		waitAcked(t, &acked, before)
	}
	close(stop)
	recv(t, done)
	groups, err := ce.meta.LoadShardGroups(context.Background(), shard)
	if err != nil || len(groups) != 1 || acked.Load() < 1 || groups[0].Offsets[metadata.GroupPartition{Topic: "t"}].Offset < acked.Load() {
		t.Fatalf("stored %+v (%v), last acknowledged %d", groups, err, acked.Load())
	}
}

// waitAcked waits until a commit after the first n is acknowledged.
func waitAcked(t *testing.T, acked *atomic.Int64, n int64) {
	t.Helper()
	testwait.Until(t, hangBound, func() bool { return acked.Load() > n }, "no commit acknowledged after %d", n)
}

// commitUntil commits offsets 1, 2, ... of group "g" to whichever node
// takes them, until stop, and keeps the last one acknowledged in acked.
func commitUntil(nodes []*node, acked *atomic.Int64, stop chan struct{}) {
	for next := int64(1); next < 1_000_000; {
		select {
		case <-stop:
			return
		default:
		}
		for _, n := range nodes {
			res := <-n.c.Commit(CommitRequest{Group: "g", Generation: -1, Offsets: []CommitOffset{{Topic: "t", Offset: next}}})
			if res.Err == nil && res.Partitions[0] == nil {
				acked.Store(next)
				next++
				break
			}
		}
	}
}
