package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sediment-io/sediment/cluster"
	"github.com/sediment-io/sediment/cmd/broker/internal/history"
	"github.com/sediment-io/sediment/groupcoord"
)

// holdUploads keeps a broker's acknowledged records in its WAL only: it
// cuts no object for an hour nor before a GiB waits.
var holdUploads = []string{"--upload-interval", "1h", "--upload-bytes", fmt.Sprint(1 << 30)}

// TestClusterWalSticky (issue 18, test 7): three brokers with
// --durability wal. The owner of partition 0 is killed with SIGKILL after
// acknowledging records it never uploaded; its partitions stay placed on
// it and nobody else acquires them; it comes back and every acknowledged
// record is there. Then it is killed for good with records in its WAL
// only, and `broker partitions takeover --from N --accept-loss` moves its
// partitions to the live brokers and names each one's committed offset:
// exactly the acknowledged records at or past those offsets on its
// partitions are lost, nothing else, and the moved partitions take new
// records from the committed offsets on. When it comes back after all,
// its WAL brings none of the given-up records back into the log.
func TestClusterWalSticky(t *testing.T) {
	c := startCluster(t, clusterOpts{Durability: "wal"})
	const topic, partitions = "sticky", 6
	createTopics(t, c.addrs(1)[0], topic, partitions)
	owners := c.waitOwned(topic, partitions, nil)
	victim := owners[0].Node
	parts := ownedBy(owners, victim)
	acked := produceAckedTo(t, c.addrs(), topic, "a", 600, partitions)

	// The victim runs with its uploads held: what it acknowledges next is
	// in its WAL only when it is killed.
	c.withFlags(holdUploads, func() { c.restartSticky(victim) })
	c.waitOwnedBy(topic, parts, victim)
	acked = append(acked, produceAckedTo(t, c.addrs(), topic, "b", 600, partitions)...)
	c.checkUnuploaded(topic, parts, acked)

	c.kill(victim)
	c.checkSticky(topic, victim, parts)
	c.start(victim)
	c.waitOwnedBy(topic, parts, victim)
	checkAcked(t, readFinal(t, c.addrs(), topic), acked, nil)
	checkNoDivergence(t, c.addrs(), topic, parts)
	c.waitUploaded(topic, acked) // its WAL replayed and uploaded

	// Killed for good with acknowledged records in its WAL only.
	c.withFlags(holdUploads, func() { c.restartSticky(victim) })
	c.waitOwnedBy(topic, parts, victim)
	acked = append(acked, produceAckedTo(t, c.addrs(), topic, "c", 600, partitions)...)
	c.checkUnuploaded(topic, parts, acked)
	refused, stderr, code := brokerCLI(t, nil, "partitions", "takeover", "--metadata", c.metadataURL(), "--from", fmt.Sprint(victim), "--accept-loss")
	if code == 0 || !strings.Contains(stderr, "live") {
		t.Errorf("takeover of live node %d: exit %d, want an error saying it is live\nstdout: %s\nstderr: %s", victim, code, refused, stderr)
	}
	c.kill(victim)
	c.waitGone(victim)
	committed := c.takeover(victim, parts)
	live := without(c.ids(), victim)
	c.waitOwned(topic, partitions, func(node int32) bool { return node != victim })
	c.checkPlacedOn(topic, live)

	lost := checkAcked(t, readFinal(t, c.addrs(live...), topic), acked, committed)
	if lost == 0 {
		t.Errorf("no acknowledged record lost: the victim's WAL held none past the committed offsets %v", committed)
	}
	t.Logf("takeover of node %d lost %d acknowledged records, all at or past the committed offsets %v", victim, lost, committed)
	after := produceAckedTo(t, c.addrs(live...), topic, "d", 600, partitions)
	for _, a := range after {
		if end, ok := committed[a.Partition]; ok && a.Offset < end {
			t.Errorf("%s/%d: new record acknowledged at offset %d, below the committed offset %d the takeover kept", topic, a.Partition, a.Offset, end)
		}
	}
	acked = append(acked, after...)
	before := readFinal(t, c.addrs(live...), topic)
	checkAcked(t, before, acked, committed)

	// Back with the WAL it had when killed: what the takeover gave up
	// stays given up (the others wrote past it), and the log as it was
	// read goes on unchanged.
	c.start(victim)
	c.waitMember(victim, false)
	c.waitOwned(topic, partitions, nil)
	c.waitMetadataMatches(topic, partitions, c.ids())
	acked = append(acked, produceAckedTo(t, c.addrs(), topic, "e", 600, partitions)...)
	final := readFinal(t, c.addrs(), topic)
	checkAcked(t, final, acked, committed)
	checkPrefix(t, before, final)
}

// checkNoDivergence reads parts of topic to their ends, as a consumer
// does, and asks OffsetForLeaderEpoch (KIP-320) for the epoch of the last
// record read: the answer must not end that epoch below what was read.
// The records the owner kept in its WAL across its restart carry the
// epoch they were served in, so its new epoch must start past them.
func checkNoDivergence(t *testing.T, seeds []string, topic string, parts []int32) {
	t.Helper()
	ctx := testCtx(t, 120*time.Second)
	ends := listEnds(t, ctx, seeds, topic)
	offsets := map[int32]kgo.Offset{}
	for _, p := range parts {
		offsets[p] = kgo.NewOffset().AtStart()
	}
	cl := newClusterClient(t, seeds, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}),
		kgo.FetchMaxWait(200*time.Millisecond))
	defer cl.Close()
	last := map[int32]*kgo.Record{}
	next := map[int32]int64{}
	want := map[int32]int64{}
	for _, p := range parts {
		want[p] = ends[p]
	}
	for !reachedEnds(next, want) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read of %s: at %v of ends %v after 120s", topic, next, want)
		}
		fs.EachRecord(func(r *kgo.Record) {
			last[r.Partition], next[r.Partition] = r, r.Offset+1
		})
	}
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.ReplicaID = -1
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = topic
	for _, r := range last {
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = r.Partition, -1, r.LeaderEpoch
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("OffsetForLeaderEpoch: %v", err)
	}
	for _, tr := range resp.Topics {
		for _, rp := range tr.Partitions {
			r := last[rp.Partition]
			if r == nil {
				t.Errorf("%s/%d: OffsetForLeaderEpoch answered a partition not asked for", topic, rp.Partition)
				continue
			}
			if rp.ErrorCode != 0 || rp.LeaderEpoch != r.LeaderEpoch || rp.EndOffset <= r.Offset {
				t.Errorf("%s/%d: read to offset %v in epoch %d; OffsetForLeaderEpoch answers epoch %d ending at %d (error %d): a diverged log",
					topic, rp.Partition, r.Offset, r.LeaderEpoch, rp.LeaderEpoch, rp.EndOffset, rp.ErrorCode)
			}
		}
	}
}

// waitMember waits until node's members/ key says taken_over is taken.
func (c *testCluster) waitMember(node int32, taken bool) {
	c.t.Helper()
	key := c.key(fmt.Sprintf("members/%010d", node))
	c.waitFor(30*time.Second, fmt.Sprintf("%s taken_over %v", key, taken), func(ctx context.Context) (bool, string) {
		resp, err := c.cli.Get(ctx, key)
		if err != nil || len(resp.Kvs) == 0 {
			return false, fmt.Sprintf("%s: %v", key, err)
		}
		var m cluster.Member
		if err := json.Unmarshal(resp.Kvs[0].Value, &m); err != nil {
			return false, err.Error()
		}
		return m.TakenOver == taken, string(resp.Kvs[0].Value)
	})
}

// checkPrefix: each partition's log as read before is a prefix of the
// final one, entry for entry.
func checkPrefix(t *testing.T, before, final map[history.Partition][]history.Entry) {
	t.Helper()
	for part, entries := range before {
		got := final[part]
		if len(got) < len(entries) {
			t.Errorf("%v: %d entries, fewer than the %d read before", part, len(got), len(entries))
			continue
		}
		for i, e := range entries {
			if got[i] != e {
				t.Errorf("%v: entry %d was %+v, now %+v", part, i, e, got[i])
				break
			}
		}
	}
}

// withFlags runs fn with flags added to every broker started meanwhile.
func (c *testCluster) withFlags(flags []string, fn func()) {
	saved := c.opts.Flags
	c.opts.Flags = append(slices.Clone(saved), flags...)
	defer func() { c.opts.Flags = saved }()
	fn()
}

// restartSticky kills a wal-mode node and starts it again once its old
// session ended (its node id is free again).
func (c *testCluster) restartSticky(id int32) {
	c.t.Helper()
	c.kill(id)
	c.waitGone(id)
	c.start(id)
}

// waitGone waits until node's session ended: its brokers/ key is gone.
func (c *testCluster) waitGone(node int32) {
	c.t.Helper()
	key := c.key(fmt.Sprintf("brokers/%010d", node))
	c.waitFor(30*time.Second, fmt.Sprintf("node %d's session ended", node), func(ctx context.Context) (bool, string) {
		resp, err := c.cli.Get(ctx, key, clientv3.WithCountOnly())
		if err != nil {
			return false, err.Error()
		}
		return resp.Count == 0, key + " still there"
	})
}

// waitOwnedBy waits until node owns every partition of parts of topic.
func (c *testCluster) waitOwnedBy(topic string, parts []int32, node int32) {
	c.t.Helper()
	c.waitFor(30*time.Second, fmt.Sprintf("node %d owns %s partitions %v", node, topic, parts), func(ctx context.Context) (bool, string) {
		owners, _, err := c.owners(ctx, topic)
		if err != nil {
			return false, err.Error()
		}
		for _, p := range parts {
			if o, ok := owners[p]; !ok || o.Node != node {
				return false, fmt.Sprintf("owners %v", owners)
			}
		}
		return true, ""
	})
}

// ackedEnds returns each partition's end offset after the acks.
func ackedEnds(acked []ackedRecord) map[int32]int64 {
	ends := map[int32]int64{}
	for _, a := range acked {
		ends[a.Partition] = max(ends[a.Partition], a.Offset+1)
	}
	return ends
}

// waitUploaded waits until every acknowledged record of topic is
// committed to the bucket, as `broker cluster describe` tells.
func (c *testCluster) waitUploaded(topic string, acked []ackedRecord) {
	c.t.Helper()
	ends := ackedEnds(acked)
	c.waitFor(30*time.Second, topic+" committed", func(context.Context) (bool, string) {
		for _, p := range c.describe().Partitions {
			if p.Topic == topic && p.CommittedOffset < ends[p.Partition] {
				return false, fmt.Sprintf("%s/%d committed to %d of %d", topic, p.Partition, p.CommittedOffset, ends[p.Partition])
			}
		}
		return true, ""
	})
}

// checkUnuploaded: on every partition of parts, some acknowledged record
// is past the committed offset (in a WAL only).
func (c *testCluster) checkUnuploaded(topic string, parts []int32, acked []ackedRecord) {
	c.t.Helper()
	ends := ackedEnds(acked)
	d := c.describe()
	for _, p := range d.Partitions {
		if p.Topic == topic && slices.Contains(parts, p.Partition) && p.CommittedOffset >= ends[p.Partition] {
			c.t.Fatalf("%s/%d: committed offset %d already covers every ack (end %d): the test needs records in the WAL only",
				topic, p.Partition, p.CommittedOffset, ends[p.Partition])
		}
	}
}

// checkSticky: once node's session ended, its partitions stay placed on
// it, described as waiting for it, and no broker acquires them for two
// placement periods and more (the controller's and every broker's passes
// run in that time); its coordinator shards, which no WAL holds, move to
// the live brokers.
func (c *testCluster) checkSticky(topic string, node int32, parts []int32) {
	c.t.Helper()
	c.waitGone(node)
	ctx := testCtx(c.t, time.Minute)
	ids, err := c.topicIDs(ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	rev := c.revision()
	watch, cancel := context.WithTimeout(ctx, 12*time.Second)
	defer cancel()
	prefix := c.key("own/parts/" + ids[topic] + "/")
	for resp := range c.cli.Watch(watch, prefix, clientv3.WithPrefix(), clientv3.WithRev(rev)) {
		for _, ev := range resp.Events {
			_, p, err := parseOwnerKey(strings.TrimPrefix(string(ev.Kv.Key), c.key("")))
			if err == nil && ev.Type == clientv3.EventTypePut && slices.Contains(parts, p) {
				c.t.Errorf("%s/%d, placed on gone wal-mode node %d, acquired at revision %d: %s", topic, p, node, ev.Kv.ModRevision, ev.Kv.Value)
			}
		}
	}
	c.waitFor(30*time.Second, "every coordinator shard owned by a live broker", func(ctx context.Context) (bool, string) {
		shards, err := c.shardOwners(ctx)
		if err != nil {
			return false, err.Error()
		}
		for s := range int32(groupcoord.Shards) {
			if o, ok := shards[s]; !ok || o == node {
				return false, fmt.Sprintf("shard %d owned by %d (%v)", s, o, ok)
			}
		}
		return true, ""
	})
	for _, p := range c.describe().Partitions {
		if p.Topic != topic || !slices.Contains(parts, p.Partition) {
			continue
		}
		if p.Placed != node || p.Owner != -1 || !p.PlacedOnGoneNode {
			c.t.Errorf("%s/%d while node %d is gone: placed %d, owner %d, waits for it %v; want placed on it, no owner, waiting",
				topic, p.Partition, node, p.Placed, p.Owner, p.PlacedOnGoneNode)
		}
	}
}

// takeover runs `broker partitions takeover --from node --accept-loss`
// and checks its report: one line per partition of parts with the offset
// from which its acknowledged records are lost (the committed offset).
// It returns those offsets.
func (c *testCluster) takeover(node int32, parts []int32) map[int32]int64 {
	c.t.Helper()
	before := c.describe()
	stdout, stderr, code := brokerCLI(c.t, nil, "partitions", "takeover", "--metadata", c.metadataURL(), "--from", fmt.Sprint(node), "--accept-loss")
	if code != 0 {
		c.t.Fatalf("takeover --from %d: exit %d\nstdout: %s\nstderr: %s", node, code, stdout, stderr)
	}
	c.t.Logf("takeover --from %d:\n%s", node, stdout)
	committed := map[int32]int64{}
	for _, p := range before.Partitions {
		if !slices.Contains(parts, p.Partition) {
			continue
		}
		committed[p.Partition] = p.CommittedOffset
		line := fmt.Sprintf("%s/%d: records broker %d acknowledged at offset %d or later are lost", p.Topic, p.Partition, node, p.CommittedOffset)
		if !strings.Contains(stdout, line) {
			c.t.Errorf("takeover report lacks %q\n%s", line, stdout)
		}
	}
	if want := fmt.Sprintf("%d partitions move", len(parts)); !strings.Contains(stdout, want) {
		c.t.Errorf("takeover report does not say %q\n%s", want, stdout)
	}
	return committed
}

// checkPlacedOn: every partition of topic is placed on and owned by a
// node of live, as `broker cluster describe` tells.
func (c *testCluster) checkPlacedOn(topic string, live []int32) {
	c.t.Helper()
	c.waitFor(30*time.Second, topic+" placed on live brokers", func(context.Context) (bool, string) {
		for _, p := range c.describe().Partitions {
			if p.Topic == topic && (!slices.Contains(live, p.Placed) || p.Placed != p.Owner || p.PlacedOnGoneNode) {
				return false, fmt.Sprintf("%s/%d placed %d owner %d waits %v", topic, p.Partition, p.Placed, p.Owner, p.PlacedOnGoneNode)
			}
		}
		return true, ""
	})
}

// describe runs `broker cluster describe --output json` and decodes it.
func (c *testCluster) describe() cluster.Description {
	c.t.Helper()
	stdout, stderr, code := brokerCLI(c.t, nil, "cluster", "describe", "--metadata", c.metadataURL(), "--output", "json")
	if code != 0 {
		c.t.Fatalf("cluster describe: exit %d\n%s", code, stderr)
	}
	var d cluster.Description
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		c.t.Fatalf("cluster describe: %v\n%s", err, stdout)
	}
	return d
}

// ackedRecord is a record the cluster acknowledged, where it said.
type ackedRecord struct {
	Partition int32
	Offset    int64
	Value     string
}

// produceAckedTo produces n records valued prefix-i round-robin over the
// partitions (idempotent, acks=all) and returns their acknowledgements;
// any failed record fails the test.
func produceAckedTo(t *testing.T, seeds []string, topic, prefix string, n int, partitions int32) []ackedRecord {
	t.Helper()
	ctx := testCtx(t, 2*time.Minute)
	cl := newClusterClient(t, seeds, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(5*time.Millisecond))
	defer cl.Close()
	var (
		mu    sync.Mutex
		out   []ackedRecord
		first error
		wg    sync.WaitGroup
	)
	for i := range n {
		wg.Add(1)
		r := &kgo.Record{Partition: int32(i) % partitions, Value: []byte(fmt.Sprintf("%s-%d", prefix, i))}
		cl.Produce(ctx, r, func(r *kgo.Record, err error) {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				first = cmp.Or(first, err)
				return
			}
			out = append(out, ackedRecord{Partition: r.Partition, Offset: r.Offset, Value: string(r.Value)})
		})
	}
	wg.Wait()
	if first != nil {
		t.Fatalf("produce %s-*: %v", prefix, first)
	}
	return out
}

// checkAcked checks the log read against the acknowledgements: each ack
// holds its value at its offset, once in its partition, unless it is on a
// partition of lostFrom at or past that offset (the loss a takeover
// accepted): then it may be gone, and is counted. It returns that count.
func checkAcked(t *testing.T, log map[history.Partition][]history.Entry, acked []ackedRecord, lostFrom map[int32]int64) int {
	t.Helper()
	at := map[int32]map[int64]string{}
	seen := map[string]int{}
	for part, entries := range log {
		at[part.Partition] = map[int64]string{}
		for _, e := range entries {
			at[part.Partition][e.Offset] = e.Value
			seen[e.Value]++
		}
	}
	lost, bad := 0, 0
	for _, a := range acked {
		if from, ok := lostFrom[a.Partition]; ok && a.Offset >= from {
			if at[a.Partition][a.Offset] != a.Value {
				lost++
			}
			continue
		}
		if got := at[a.Partition][a.Offset]; got != a.Value || seen[a.Value] != 1 {
			if bad++; bad <= 10 {
				t.Errorf("ack %q at %d/%d: the log holds %q there, and the value %d times", a.Value, a.Partition, a.Offset, got, seen[a.Value])
			}
		}
	}
	if bad > 10 {
		t.Errorf("%d acknowledged records not in the log as acknowledged", bad)
	}
	return lost
}
