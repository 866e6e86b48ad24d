package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/internal/testwait"
	"github.com/sediment-io/sediment/txncoord"
)

// TestClusterTxnAcrossBrokers (issue 19, cluster): three brokers on
// etcd. A GroupTransactSession member whose transaction coordinator is one
// broker writes to partitions owned by all three and commits offsets to a
// group coordinated by another broker: markers and offset completions
// travel between brokers (WriteTxnMarkers), and every key arrives once.
// Then the broker coordinating a transaction is killed with SIGKILL: while
// the transaction is Ongoing (its producer then commits it through the
// shard's next owner), right after its PrepareCommit is durable (the crash
// seam, armed for that one commit: the next owner completes it), and while
// it is Ongoing with its producer gone (the next owner aborts it at its
// timeout). read_committed sees all of each transaction or none of it.
func TestClusterTxnAcrossBrokers(t *testing.T) {
	arm := filepath.Join(t.TempDir(), "armed")
	c := startCluster(t, clusterOpts{Env: []string{txnCrashEnv + "=after-prepare-commit:" + arm}})
	seeds := c.addrs()
	const parts = 6
	createTopics(t, seeds[0], "in", 3)
	for _, topic := range []string{"x", "y", "z", "w"} {
		createTopics(t, seeds[0], topic, parts)
	}
	owners := c.waitOwned("x", parts, nil)
	c.waitOwned("in", 3, nil)
	spread := map[int32]bool{}
	for _, o := range owners {
		spread[o.Node] = true
	}
	if len(spread) < 2 {
		t.Fatalf("x's partitions all on one broker: %v", owners)
	}

	t.Run("across brokers", func(t *testing.T) {
		const group = "cross-group"
		groupNode := c.waitCoordinator(group, nil)
		name := c.txnNameCoordinatedBy(func(node int32) bool { return node != groupNode }, "cross-", "-m")
		keys := txnKeys(400)
		produceKeys(t, seeds, "in", 3, keys)
		st := &etlStage{t: t, name: name, seeds: seeds, group: group, in: "in", outs: []string{"x"},
			balancer: kgo.CooperativeStickyBalancer(), abortEvery: 3, committed: newKeySet()}
		m := st.start("m", 0)
		waitGroupAtEnd(t, seeds, group, "in", 2*time.Minute)
		m.stop(t)
		writeSentinels(t, seeds, "x", parts)
		checkKeysOnce(t, "x read_committed", readToSentinels(t, seeds, "x", parts, kgo.ReadCommitted()), keys)
	})

	t.Run("coordinator killed while ongoing", func(t *testing.T) {
		txnID := c.txnNameCoordinatedBy(nil, "ongoing-", "")
		coord := c.waitCoordinator(txnID, nil)
		ctx, _ := ctxFor(t, 3*time.Minute)
		prod := txnProducer(t, seeds, txnID, kgo.TransactionTimeout(time.Minute))
		must(t, "begin", prod.BeginTransaction())
		want := produceEach(t, ctx, prod, "y", parts, "y")
		c.kill(coord)
		c.waitCoordinator(txnID, func(n int32) bool { return n != coord })
		committed := prod.EndTransaction(ctx, kgo.TryCommit) == nil
		t.Logf("node %d coordinated %s and was killed; the commit after it went through: %v", coord, txnID, committed)
		c.start(coord)
		checkAllOrNothing(t, c, "y", parts, want, committed)
	})

	t.Run("coordinator killed after prepare commit", func(t *testing.T) {
		txnID := c.txnNameCoordinatedBy(nil, "prepared-", "")
		coord := c.waitCoordinator(txnID, nil)
		ctx, _ := ctxFor(t, 3*time.Minute)
		prod := txnProducer(t, seeds, txnID, kgo.TransactionTimeout(time.Minute))
		must(t, "begin", prod.BeginTransaction())
		want := produceEach(t, ctx, prod, "z", parts, "z")
		must(t, "arm the crash seam", os.WriteFile(arm, nil, 0o644))
		ended := make(chan error, 1)
		go func() { ended <- prod.EndTransaction(ctx, kgo.TryCommit) }()
		waitKilled(t, c.proc(coord), time.Minute)
		must(t, "disarm the crash seam", os.Remove(arm))
		// The commit was durable as PrepareCommit: the shard's next owner
		// completes it, and the producer's retried EndTxn succeeds.
		if err := <-ended; err != nil {
			t.Fatalf("commit across the coordinator's crash: %v", err)
		}
		c.start(coord)
		checkAllOrNothing(t, c, "z", parts, want, true)
	})

	t.Run("coordinator killed, transaction abandoned", func(t *testing.T) {
		txnID := c.txnNameCoordinatedBy(nil, "abandoned-", "")
		coord := c.waitCoordinator(txnID, nil)
		ctx, _ := ctxFor(t, 3*time.Minute)
		prod := txnProducer(t, seeds, txnID, kgo.TransactionTimeout(3*time.Second))
		must(t, "begin", prod.BeginTransaction())
		want := produceEach(t, ctx, prod, "w", parts, "w")
		c.kill(coord)
		// The shard's next owner loads the transaction Ongoing and aborts
		// it once its timeout passed: every partition's last stable
		// offset reaches its end.
		waitStable(t, c.addrs(without(c.ids(), coord)...), "w", 2*time.Minute)
		c.start(coord)
		checkAllOrNothing(t, c, "w", parts, want, false)
	})
}

// waitStable waits until every partition of topic has no open
// transaction: its last stable offset is its end offset.
func waitStable(t *testing.T, seeds []string, topic string, d time.Duration) {
	t.Helper()
	adm := kadm.NewClient(newClusterClient(t, seeds))
	defer adm.Close()
	ctx, _ := ctxFor(t, d+time.Minute)
	last := ""
	testwait.Until(t, d, func() bool {
		stable, err := adm.ListCommittedOffsets(ctx, topic)
		if err == nil {
			err = stable.Error()
		}
		ends, err2 := adm.ListEndOffsets(ctx, topic)
		if err == nil {
			err = errors.Join(err2, ends.Error())
		}
		if err != nil {
			last = err.Error()
			return false
		}
		done := true
		ends.Each(func(o kadm.ListedOffset) {
			s, ok := stable.Lookup(topic, o.Partition)
			done = done && ok && s.Offset == o.Offset
		})
		last = fmt.Sprintf("stable %v, ends %v", stable.Offsets(), ends.Offsets())
		return done
	}, "%s still has open transactions: %v", topic, testwait.Later(func() string { return last }))
}

// produceEach writes one record to every partition of topic in prod's
// open transaction and returns their values.
func produceEach(t *testing.T, ctx context.Context, prod *kgo.Client, topic string, parts int32, prefix string) []string {
	t.Helper()
	var out []string
	for p := range parts {
		v := fmt.Sprintf("%s-%d", prefix, p)
		produceOne(t, ctx, prod, topic, p, v)
		out = append(out, v)
	}
	return out
}

// checkAllOrNothing reads topic with read_committed and fails unless it
// holds every value of want (committed) or none of them.
func checkAllOrNothing(t *testing.T, c *testCluster, topic string, parts int32, want []string, committed bool) {
	t.Helper()
	writeSentinels(t, c.addrs(), topic, parts)
	got := values(readToSentinels(t, c.addrs(), topic, parts, kgo.ReadCommitted()))
	slices.Sort(got)
	if !committed {
		want = nil
	}
	if !slices.Equal(got, want) {
		t.Fatalf("read_committed of %s: got %v, want %v\n%s", topic, got, want, c.logs())
	}
}

// txnNameCoordinatedBy returns prefix+N, for the first N whose
// transactional id prefix+N+suffix hashes to a shard owned by a node want
// accepts (nil: any).
func (c *testCluster) txnNameCoordinatedBy(want func(node int32) bool, prefix, suffix string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	owners, err := c.shardOwners(ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	for i := range 1000 {
		name := prefix + strconv.Itoa(i)
		node, ok := owners[txncoord.ShardOf(name+suffix)]
		if ok && (want == nil || want(node)) {
			return name
		}
	}
	c.t.Fatalf("no transactional id %sN%s coordinated by a wanted node; shard owners %v", prefix, suffix, owners)
	return ""
}
