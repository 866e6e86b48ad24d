package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

const converge = 60 * time.Second // bound of every wait for convergence

// TestConverge: three nodes, started one after the other, end with
// disjoint owners covering every partition and shard, each holding the
// fence of what it owns, every view naming the same leaders, one
// controller, and each node owning part of the load.
func TestConverge(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	c := newTestCluster(t, endpoint, "converge")
	c.createTopic("a", 6)
	n1 := c.mustStart(1, "object", nil)
	n2 := c.mustStart(2, "object", nil)
	n3 := c.mustStart(3, "object", nil)
	c.createTopic("b", 9)
	nodes := []*testNode{n1, n2, n3}
	waitFor(t, converge, "three nodes own every slot once", func() bool {
		return c.converged(nodes...) && n1.owner.count() > 0 && n2.owner.count() > 0 && n3.owner.count() > 0
	})
	ctl := n1.Controller()
	if ctl < 1 || ctl > 3 || n2.Controller() != ctl || n3.Controller() != ctl {
		t.Fatalf("controllers seen: %d %d %d", n1.Controller(), n2.Controller(), n3.Controller())
	}
	sweepers := 0
	for _, n := range nodes {
		if n.Sweeps() {
			sweepers++
		}
		if got := n.Brokers(); len(got) != 3 || got[0].NodeID != 1 || got[2].Port != 9003 {
			t.Fatalf("brokers seen by %d: %+v", n.cfg.NodeID, got)
		}
	}
	if sweepers != 1 {
		t.Fatalf("%d nodes sweep, want the controller only", sweepers)
	}
	// Each fence is the own key at its version: a write under it commits.
	for _, n := range nodes {
		for _, topic := range c.topics {
			for p := range topic.Partitions {
				if f, ok := n.Fence(topic.ID, p); ok {
					if _, err := c.kv.Txn(context.Background(), []metadata.Cond{f}, []metadata.Op{metadata.Put("probe", nil)}); err != nil {
						t.Fatalf("write under node %d's fence of %d: %v", n.cfg.NodeID, p, err)
					}
				}
			}
		}
	}
}

// TestGracefulHandover: a node closed gracefully hands each of its
// partitions over before the next owner takes it (the fakes' registry
// sees no two owners at once), drops nothing, and the own keys' history
// on etcd never has a second owner while the first holds the key.
func TestGracefulHandover(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	c := newTestCluster(t, endpoint, "handover")
	c.createTopic("a", 12)
	start, err := c.kv.Client().Get(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	n1, n2, n3 := c.mustStart(1, "object", nil), c.mustStart(2, "object", nil), c.mustStart(3, "object", nil)
	waitFor(t, converge, "three nodes converge", func() bool {
		return c.converged(n1, n2, n3) && n3.owner.count() > 0
	})
	closeNode(t, n3.Node)
	if _, _, drops := n3.owner.counts(); drops != 0 || n3.owner.count() != 0 {
		t.Fatalf("node 3 closed gracefully: %d drops, %d still served", drops, n3.owner.count())
	}
	waitFor(t, converge, "two nodes take over node 3's slots", func() bool { return c.converged(n1, n2) })
	checkOwnHistory(t, c, start.Header.Revision)
	if _, ok, _ := c.kv.Get(context.Background(), memberKey(3)); ok {
		t.Fatal("a node that left cleanly is still a member")
	}
}

// checkOwnHistory reads every revision of the own keys since rev and
// fails if a key was written while it existed: at most one owner at any
// revision.
func checkOwnHistory(t *testing.T, c *testCluster, rev int64) {
	t.Helper()
	cli := c.kv.Client()
	head, err := cli.Get(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prefix := c.kv.Prefix() + ownPrefix
	exists := map[string]bool{}
	puts := 0
	for resp := range cli.Watch(ctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1)) {
		if resp.Err() != nil {
			t.Fatal(resp.Err())
		}
		for _, ev := range resp.Events {
			key := strings.TrimPrefix(string(ev.Kv.Key), prefix)
			if ev.Type == mvccpb.PUT {
				puts++
				if exists[key] {
					t.Fatalf("%s written at revision %d while it was held", key, ev.Kv.ModRevision)
				}
			}
			exists[key] = ev.Type == mvccpb.PUT
		}
		if resp.Header.Revision >= head.Header.Revision {
			break
		}
	}
	if puts == 0 {
		t.Fatal("no own key history read")
	}
}

// TestSameNodeID: a second broker with a live broker's --node-id is
// refused, naming the flag and the other's address, after waiting for the
// registration's lease; a registration left by a killed incarnation is
// waited out.
func TestSameNodeID(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	c := newTestCluster(t, endpoint, "sameid")
	c.mustStart(1, "object", nil)
	_, err := c.start(1, "object", nil)
	if !errors.Is(err, ErrNodeIDTaken) || !strings.Contains(err.Error(), "--node-id 1") || !strings.Contains(err.Error(), "127.0.0.1:9001") {
		t.Fatalf("second node 1: err=%v, want a refusal naming --node-id 1 and 127.0.0.1:9001", err)
	}
	// A previous incarnation of node 2, killed: its registration lives
	// until its lease expires.
	cli := c.kv.Client()
	lease, err := cli.Grant(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	old := mustJSON(brokerRecord{NodeID: 2, Host: "127.0.0.1", Port: 9002})
	if _, err := cli.Put(context.Background(), c.kv.Prefix()+brokerKey(2), old, clientv3.WithLease(lease.ID)); err != nil {
		t.Fatal(err)
	}
	n2 := c.mustStart(2, "object", nil)
	if !n2.Valid() {
		t.Fatal("node 2 not valid after start")
	}
}

// TestEtcdOutage: with etcd gone for longer than the TTL, the node stops
// acting as an owner (invalid, everything dropped, no fence); when etcd
// comes back it gets a new session and owns everything again by itself.
func TestEtcdOutage(t *testing.T) {
	m := etcdtest.StartMember(t)
	c := newTestCluster(t, m.Endpoint(), "outage")
	c.createTopic("a", 4)
	reg := prometheus.NewRegistry()
	n := c.mustStart(1, "object", func(n *Node) { n.cfg.Registry = reg })
	waitFor(t, converge, "one node owns everything", func() bool { return c.converged(n) })
	if v := gauge(t, reg, "sediment_cluster_session_valid"); v != 1 {
		t.Fatalf("session_valid %v while valid", v)
	}
	lost := n.Lost()
	m.Stop()
	select {
	case <-lost:
	case <-time.After(converge):
		t.Fatal("the session outlived etcd")
	}
	if n.Valid() || gauge(t, reg, "sediment_cluster_session_valid") != 0 {
		t.Fatal("valid after the session was lost")
	}
	waitFor(t, converge, "everything dropped", func() bool { return n.owner.count() == 0 })
	if _, ok := n.Fence(c.topics[0].ID, 0); ok {
		t.Fatal("a fence survived the session")
	}
	m.Restart(t)
	waitFor(t, converge, "the node owns everything again", func() bool { return n.Valid() && c.converged(n) })
	if gauge(t, reg, "sediment_cluster_session_valid") != 1 || gauge(t, reg, "sediment_cluster_sessions_lost_total") < 1 {
		t.Fatal("metrics do not show the lost and renewed session")
	}
	if _, _, drops := n.owner.counts(); drops == 0 {
		t.Fatal("nothing was dropped")
	}
}

func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			m := mf.GetMetric()[0]
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

func ownedPartitions(n *testNode, topics []metadata.Topic) map[string]metadata.Cond {
	out := map[string]metadata.Cond{}
	for _, t := range topics {
		for p := range t.Partitions {
			if f, ok := n.Fence(t.ID, p); ok {
				out[fmt.Sprint(t.ID, p)] = f
			}
		}
	}
	return out
}

// TestZombie: a node whose keep-alives stop (as a paused process) stops
// acting as an owner at its local deadline, while etcd still has its
// lease; its partitions then move to the others, its old fences commit
// nothing, and once it runs again it rejoins as a normal member.
func TestZombie(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	c := newTestCluster(t, endpoint, "zombie")
	c.createTopic("a", 9)
	n1, n2 := c.mustStart(1, "object", nil), c.mustStart(2, "object", nil)
	z := c.mustStart(3, "object", func(n *Node) { n.marginFraction = 0.5 })
	waitFor(t, converge, "three nodes converge", func() bool {
		return c.converged(n1, n2, z) && len(ownedPartitions(z, c.topics)) > 0
	})
	fences := ownedPartitions(z, c.topics)
	lease := z.sess.Load().lease
	lost := z.Lost()
	z.keepAlivePaused.Store(true)
	select {
	case <-lost:
	case <-time.After(converge):
		t.Fatal("the session outlived its keep-alives")
	}
	ttl, err := c.kv.Client().TimeToLive(context.Background(), lease)
	if err != nil || ttl.TTL < 0 { // -1: not found; whole seconds, so 0 is under one second left
		t.Fatalf("the node stopped after etcd expired its lease %x (ttl %d, err %v): it must stop before", lease, ttl.TTL, err)
	}
	if z.Valid() || len(ownedPartitions(z, c.topics)) != 0 {
		t.Fatal("still acting as an owner after the local deadline")
	}
	waitFor(t, converge, "the others take over", func() bool { return c.converged(n1, n2) })
	for name, f := range fences {
		_, err := c.kv.Txn(context.Background(), []metadata.Cond{f}, []metadata.Op{metadata.Put("zombie-commit", nil)})
		if !metadata.IsConflict(err) {
			t.Fatalf("a commit under the zombie's fence of %s: err=%v, want conflict", name, err)
		}
	}
	z.keepAlivePaused.Store(false)
	waitFor(t, converge, "the node rejoins", func() bool {
		return z.Valid() && c.converged(n1, n2, z) && z.owner.count() > 0
	})
}

// TestWalSticky: the partitions of a gone wal-mode broker wait for it
// (while an object-mode broker's would move), and move after Takeover.
func TestWalSticky(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	c := newTestCluster(t, endpoint, "sticky")
	c.createTopic("a", 6)
	n1, n2 := c.mustStart(1, "object", nil), c.mustStart(2, "object", nil)
	w := c.mustStart(3, "wal", nil)
	waitFor(t, converge, "three nodes converge", func() bool {
		return c.converged(n1, n2, w) && len(ownedPartitions(w, c.topics)) > 0
	})
	waited := ownedPartitions(w, c.topics)
	ctx := context.Background()
	if _, err := Takeover(ctx, c.kv, 3); err == nil || !strings.Contains(err.Error(), "live") {
		t.Fatalf("takeover of a live broker: err=%v", err)
	}
	// A crash: the node reaches etcd no more, its lease expires.
	w.kv.Client().Close()
	waitFor(t, converge, "node 3's registration expires", func() bool { return len(n1.Brokers()) == 2 })
	// A topic created now is placed by a controller that knows node 3 is
	// gone: once it is owned, node 3's partitions were placed again too.
	c.createTopic("after", 2)
	waitFor(t, converge, "the new topic is owned", func() bool {
		_, _, ok1 := n1.Leader(c.topics[1].ID, 0)
		_, _, ok2 := n1.Leader(c.topics[1].ID, 1)
		return ok1 && ok2
	})
	for _, p := range c.topics[0:1] {
		for i := range p.Partitions {
			leader, _, ok := n1.Leader(p.ID, i)
			_, wasW := waited[fmt.Sprint(p.ID, i)]
			if wasW && ok {
				t.Fatalf("partition %d of the gone wal broker moved to %d", i, leader)
			}
		}
	}
	r, err := Takeover(ctx, c.kv, 3)
	if err != nil || r.Member.Durability != "wal" || r.Member.TakenOver || len(r.Partitions) != len(waited) {
		t.Fatalf("takeover: %+v err=%v, want the %d partitions node 3 owned", r, err, len(waited))
	}
	for _, p := range r.Partitions {
		// Fenced at the committed offset: the gone broker's epoch ends there.
		h, err := c.meta.LeaderEpochs(ctx, p.TopicID, p.Partition)
		if err != nil || p.OwnedBy != -1 || p.LostFrom != 0 || h.Current().StartOffset != 0 || h.Current().Epoch < 2 {
			t.Fatalf("takeover of %s/%d: %+v, epochs %+v err=%v; want lost from 0 and a new epoch there", p.Topic, p.Partition, p, h, err)
		}
	}
	waitFor(t, converge, "node 3's partitions move after the takeover", func() bool { return c.converged(n1, n2) })
}

// TestOwnerFailures: a partition whose Acquire fails has its own key
// released (and is acquired again on a later pass); a partition whose
// graceful Release fails is dropped before its key goes, so that the next
// owner never overlaps it.
func TestOwnerFailures(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	c := newTestCluster(t, endpoint, "failures")
	topic := c.createTopic("a", 4)
	rev, err := c.kv.Client().Get(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	n1 := c.mustStart(1, "object", func(n *Node) {
		f := n.cfg.Partitions.(*fakeOwner)
		for p := range topic.Partitions {
			f.failAcquire[partName(topic.ID, p)] = 2
			f.failRelease[partName(topic.ID, p)] = 1
		}
	})
	waitFor(t, converge, "node 1 owns everything despite failed acquisitions", func() bool { return c.converged(n1) })
	if h, _ := c.meta.LeaderEpochs(context.Background(), topic.ID, 0); h.Current().Epoch != 3 {
		t.Fatalf("partition 0 at epoch %d after two failed acquisitions and one success, want 3", h.Current().Epoch)
	}
	checkOwnHistory(t, c, rev.Header.Revision)
	n2 := c.mustStart(2, "object", nil)
	waitFor(t, converge, "node 2 takes its share", func() bool { return c.converged(n1, n2) && n2.owner.count() > 0 })
	if _, _, drops := n1.owner.counts(); drops == 0 {
		t.Fatal("failed hand-overs were not dropped")
	}
	checkOwnHistory(t, c, rev.Header.Revision)
}

// TestStartWaitsForEtcd: a node started while etcd is down keeps trying,
// saying so, and joins once etcd is back.
func TestStartWaitsForEtcd(t *testing.T) {
	m := etcdtest.StartMember(t)
	c := newTestCluster(t, m.Endpoint(), "late")
	c.createTopic("a", 2)
	kv := etcdtest.OpenKV(t, m.Endpoint(), "late")
	m.Stop()
	retrying := &logSignal{want: "cannot join yet", seen: make(chan struct{})}
	type result struct {
		n   *testNode
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := c.startOn(kv, 1, "object", func(n *Node) {
			n.cfg.Logger = slog.New(slog.NewTextHandler(retrying, nil))
		})
		done <- result{n, err}
	}()
	select {
	case <-retrying.seen:
	case r := <-done:
		t.Fatalf("start without etcd ended: %+v", r)
	}
	m.Restart(t)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	waitFor(t, converge, "the node owns everything", func() bool { return c.converged(r.n) })
}

// TestStrayOwnKey: an own key on the node's lease that the node does not
// serve (an acquisition read back as not applied that applied after all)
// is deleted, instead of keeping the slot from every broker.
func TestStrayOwnKey(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	c := newTestCluster(t, endpoint, "stray")
	n := c.mustStart(1, "object", func(n *Node) { n.cfg.Shards = nil })
	lease := int64(n.sess.Load().lease)
	fence, err := c.meta.AcquireShard(context.Background(), 5, 1, lease)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, converge, "the stray own key is deleted", func() bool {
		it, ok, err := c.kv.Get(context.Background(), fence.Key)
		return err == nil && (!ok || it.Version != fence.Version)
	})
	if _, ok := n.ShardFence(5); ok {
		t.Fatal("a shard fence without a shard owner")
	}
}
