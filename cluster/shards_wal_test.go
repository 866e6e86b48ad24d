package cluster

import (
	"fmt"
	"testing"

	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

// TestWalShardsMove: the coordinator shards of a gone wal-mode broker move
// to the live brokers at once, while its partitions wait for it. A shard's
// groups and offsets live in etcd only (no WAL holds them), so nothing
// waits for the gone broker to come back, and its groups would stall if
// their shard did.
func TestWalShardsMove(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	c := newTestCluster(t, endpoint, "walshards")
	c.createTopic("a", 6)
	n1, n2 := c.mustStart(1, "object", nil), c.mustStart(2, "object", nil)
	w := c.mustStart(3, "wal", nil)
	waitFor(t, converge, "three nodes converge", func() bool {
		return c.converged(n1, n2, w) && len(ownedPartitions(w, c.topics)) > 0 && ownsShard(w)
	})
	waited := ownedPartitions(w, c.topics)
	w.kv.Client().Close() // a crash: its lease expires
	waitFor(t, converge, "every shard owned by a live broker", func() bool {
		for s := range int32(Shards) {
			if leader, ok := n1.ShardLeader(s); !ok || leader == 3 {
				return false
			}
			if _, ok1 := n1.ShardFence(s); !ok1 {
				if _, ok2 := n2.ShardFence(s); !ok2 {
					return false
				}
			}
		}
		return true
	})
	for _, p := range c.topics[0:1] {
		for i := range p.Partitions {
			if _, wasW := waited[fmt.Sprint(p.ID, i)]; !wasW {
				continue
			}
			if leader, _, ok := n1.Leader(p.ID, i); ok {
				t.Errorf("partition %d of the gone wal broker moved to %d", i, leader)
			}
		}
	}
}

func ownsShard(n *testNode) bool {
	for s := range int32(Shards) {
		if _, ok := n.ShardFence(s); ok {
			return true
		}
	}
	return false
}
