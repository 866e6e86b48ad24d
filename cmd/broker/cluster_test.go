package main

// Issue 18's cluster tests on three broker processes (object durability,
// an embedded etcd, a real MinIO): bootstrap and placement, the SIGKILL of
// a busy owner, and a zombie paused past its lease. Each ends with the
// history checker over what it recorded.

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestClusterBootstrap (issue 18, test 1): franz-go and confluent-kafka-go
// clients, each given one broker's address only, produce to and consume
// every partition of topics spread over the three brokers; every broker's
// Metadata names the owner in etcd's own/ keys as each partition's leader,
// at its owner epoch, and lists the three brokers with their racks.
func TestClusterBootstrap(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	// 24 partitions: rendezvous placement leaves a broker without one with
	// a chance of 3*(2/3)^24, under 1 in 5,000.
	const partitions, total = 24, 2400
	createTopics(t, c.addrs(1)[0], "spread", partitions)
	owners := c.waitOwned("spread", partitions, nil)
	for _, id := range c.ids() {
		if len(ownedBy(owners, id)) == 0 {
			t.Errorf("node %d owns none of the %d partitions: owners %v", id, partitions, owners)
		}
	}
	c.waitMetadataMatches("spread", partitions, c.ids())

	produceNumbered(t, c.addrs(1)[0], "spread", total, partitions)
	checkNumbered(t, readTopic(t, c.addrs(2)[0], "spread"), total, partitions)

	ctx := testCtx(t, 60*time.Second)
	const topic = "spread-confluent"
	createTopics(t, c.addrs(2)[0], topic, 6)
	c.waitOwned(topic, 6, nil)
	recs := makeRecords(topic, 300)
	acks, _ := produceConfluent(t, confluentProducerConfig(c.addrs(2)[0]), topic, recs)
	consumeConfluent(t, ctx, c.addrs(3)[0], topic, layoutByPartition(t, recs, acks), 6)

	c.waitMetadataMatches("spread", partitions, c.ids())
	c.checkHistory(nil) // one owner at a time, every commit fenced
}

// TestClusterKillOwner (issue 18, tests 2 and 9): while an idempotent
// producer writes to every partition and a consumer reads, the owner of
// partition 0 is killed with SIGKILL. Its partitions move to the others
// within the lease and a few seconds, produce resumes on them, and the
// history checks out: every ack read back exactly once at the offset it
// named, contiguous offsets, real-time order, reads a prefix of the final
// log, one owner at a time and every commit fenced.
func TestClusterKillOwner(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	const topic, partitions = "busy", 6
	createTopics(t, c.addrs(1)[0], topic, partitions)
	owners := c.waitOwned(topic, partitions, nil)
	stopSampler := c.startSampler(c.rec, 250*time.Millisecond)
	prod := startHistoryProducer(t, c.addrs(), topic, c.hist, 1000)
	stopConsumer := startHistoryConsumer(t, c.addrs(), topic, c.hist)
	waitAcked(t, c.hist, 1000, 30*time.Second)

	victim := owners[0].Node
	moved := ownedBy(owners, victim)
	killed := time.Now()
	c.kill(victim)
	c.waitOwned(topic, partitions, func(node int32) bool { return node != victim })
	t.Logf("node %d killed; its partitions %v owned by the others after %v", victim, moved, time.Since(killed).Round(time.Millisecond))
	c.waitFor(30*time.Second, "produce resumed on the moved partitions", func(context.Context) (bool, string) {
		return ackedAfter(c.hist, topic, moved, killed)
	})
	t.Logf("first acks on every moved partition %v after the kill", time.Since(killed).Round(time.Millisecond))
	waitAcked(t, c.hist, 500, 30*time.Second)

	prod.stop()
	stopConsumer()
	stopSampler()
	live := without(c.ids(), victim)
	final := readFinal(t, c.addrs(live...), topic)
	c.checkHistory(final)
}

// TestClusterZombie (issue 18, tests 3 and 9): the owner of partition 0
// is paused with SIGSTOP past its lease while produce goes on. The others
// take its partitions over; after SIGCONT it commits nothing for them
// (no index key of theirs is written with its object at a revision it did
// not own them), the log holds every ack once and nothing else, and it
// rejoins: registered again under a new lease and listed in Metadata.
func TestClusterZombie(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	const topic, partitions = "zombie", 6
	createTopics(t, c.addrs(1)[0], topic, partitions)
	owners := c.waitOwned(topic, partitions, nil)
	stopSampler := c.startSampler(c.rec, 250*time.Millisecond)
	prod := startHistoryProducer(t, c.addrs(), topic, c.hist, 1000)
	waitAcked(t, c.hist, 1000, 30*time.Second)

	victim := owners[0].Node
	lost := ownedBy(owners, victim)
	pausedRev := c.revision()
	c.pause(victim)
	c.waitOwned(topic, partitions, func(node int32) bool { return node != victim })
	waitAcked(t, c.hist, 1000, 30*time.Second) // the others go on without it
	c.resume(victim)
	c.waitRegistered(victim, pausedRev)
	c.waitMetadataMatches(topic, partitions, c.ids())
	waitAcked(t, c.hist, 500, 30*time.Second)

	prod.stop()
	stopSampler()
	c.rec.sync()
	checkNoZombieCommits(t, c, topic, victim, lost, pausedRev)
	c.checkHistory(readFinal(t, c.addrs(), topic))
}

// checkNoZombieCommits: between the pause and its next acquisition of a
// partition it owned before the pause, node committed no index key of
// that partition.
func checkNoZombieCommits(t *testing.T, c *testCluster, topic string, node int32, parts []int32, pausedRev int64) {
	t.Helper()
	reacquired := map[int32]int64{}
	for _, ch := range c.hist.OwnerChanges() {
		p := ch.Partition.Partition
		if ch.Partition.Topic != topic || ch.Revision <= pausedRev || ch.Released || ch.Node != node {
			continue
		}
		if r, ok := reacquired[p]; !ok || ch.Revision < r {
			reacquired[p] = ch.Revision
		}
	}
	for _, cm := range c.hist.Commits() {
		p := cm.Partition.Partition
		if cm.Partition.Topic != topic || cm.Node != node || cm.Revision <= pausedRev {
			continue
		}
		if r, ok := reacquired[p]; (!ok || cm.Revision < r) && slices.Contains(parts, p) {
			t.Errorf("zombie node %d committed %s/%d offsets [%d,%d) at revision %d, after losing it (paused at revision %d, reacquired at %d)",
				node, topic, p, cm.BaseOffset, cm.EndOffset, cm.Revision, pausedRev, r)
		}
	}
}

// revision returns etcd's current revision.
func (c *testCluster) revision() int64 {
	c.t.Helper()
	ctx := testCtx(c.t, 10*time.Second)
	resp, err := c.cli.Get(ctx, c.key(""), clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		c.t.Fatalf("etcd revision: %v", err)
	}
	return resp.Header.Revision
}

// waitRegistered waits until node's brokers/ key exists, created after
// revision since (a new session).
func (c *testCluster) waitRegistered(node int32, since int64) {
	c.t.Helper()
	key := c.key(fmt.Sprintf("brokers/%010d", node))
	c.waitFor(30*time.Second, fmt.Sprintf("node %d registered again", node), func(ctx context.Context) (bool, string) {
		resp, err := c.cli.Get(ctx, key)
		if err != nil {
			return false, err.Error()
		}
		if len(resp.Kvs) == 0 {
			return false, key + " absent"
		}
		if rev := resp.Kvs[0].CreateRevision; rev <= since {
			return false, fmt.Sprintf("%s created at revision %d, not after %d", key, rev, since)
		}
		return true, ""
	})
}

func without(ids []int32, drop int32) []int32 {
	var out []int32
	for _, id := range ids {
		if id != drop {
			out = append(out, id)
		}
	}
	return out
}

// TestClusterEtcdLeaderLoss (issue 18, tests 4 and 9): on a three-member
// etcd, the etcd leader is stopped while an idempotent producer runs.
// Produce resumes by itself on the new etcd leader, and the history checks
// out: no acknowledged record lost or duplicated, one owner at a time.
func TestClusterEtcdLeaderLoss(t *testing.T) {
	c := startCluster(t, clusterOpts{EtcdMembers: 3})
	const topic, partitions = "quorum", 6
	createTopics(t, c.addrs(1)[0], topic, partitions)
	c.waitOwned(topic, partitions, nil)
	prod := startHistoryProducer(t, c.addrs(), topic, c.hist, 1000)
	waitAcked(t, c.hist, 1000, 30*time.Second)

	leader := c.etcd.leader()
	if leader < 0 {
		t.Fatal("no etcd leader")
	}
	stopped := time.Now()
	c.etcd.stopMember(leader)
	c.waitFor(30*time.Second, "produce resumed after the etcd leader's loss", func(context.Context) (bool, string) {
		return ackedAfter(c.hist, topic, upTo(partitions), stopped)
	})
	t.Logf("etcd member %d (the leader) stopped; acks on every partition again after %v", leader, time.Since(stopped).Round(time.Millisecond))
	waitAcked(t, c.hist, 500, 30*time.Second)

	prod.stop()
	c.checkHistory(readFinal(t, c.addrs(), topic))
}

// upTo returns 0, 1, ..., n-1.
func upTo(n int32) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}
