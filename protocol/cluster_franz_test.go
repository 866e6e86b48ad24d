package protocol

import (
	"context"
	"fmt"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/partition"
)

var spreadID = metadata.TopicID{0x5b, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}

// twoBrokerCluster is two in-process servers that agree on one view: node 0
// owns the even partitions of "spread", node 1 the odd ones, each at its
// own log's leader epoch (in a cluster the owner's log and the view agree
// on it, both read from the owner key's epoch).
type twoBrokerCluster struct {
	view    *fakeView
	brokers [2]*testBroker
}

func startTwoBrokerCluster(t *testing.T, partitions int32) *twoBrokerCluster {
	t.Helper()
	c := &twoBrokerCluster{view: newFakeView()}
	for node := range int32(2) {
		c.brokers[node] = startBroker(t, withCluster(node, c.view), withTopic("spread", spreadID, partitions))
		c.view.addBroker(selfBroker(c.brokers[node], ""))
	}
	c.view.setController(0)
	for p := range partitions {
		c.moveTo(t, p, p%2, false)
	}
	return c
}

// partition returns node's log of partition p.
func (c *twoBrokerCluster) partition(t *testing.T, node, p int32) *partition.Partition {
	t.Helper()
	topic, ok := c.brokers[node].log.TopicByID(spreadID)
	if !ok {
		t.Fatalf("node %d lost topic spread", node)
	}
	return topic.Partition(p)
}

// moveTo makes node the owner of p; bump starts a new leader epoch in its
// log first, as a change of owner does.
func (c *twoBrokerCluster) moveTo(t *testing.T, p, node int32, bump bool) {
	t.Helper()
	part := c.partition(t, node, p)
	epoch := part.LeaderEpoch()
	if bump {
		var err error
		if epoch, err = c.brokers[node].log.BumpLeaderEpoch(context.Background(), part); err != nil {
			t.Fatalf("bump epoch of p%d on node %d: %v", p, node, err)
		}
	}
	c.view.setLeader(spreadID, p, node, epoch)
}

// TestClusterFranzReroute: a franz-go client bootstrapped from one broker
// produces to and consumes from both, each partition on its owner. A
// partition whose owner changed after the client read the metadata is
// refused by its old owner (NOT_LEADER_OR_FOLLOWER, with the new leader
// named), and the client re-routes to the new one: every record lands on
// its owner's log only, and is read back exactly once.
func TestClusterFranzReroute(t *testing.T) {
	t.Parallel()
	const partitions, perPartition = 4, 20
	c := startTwoBrokerCluster(t, partitions)
	producer, _ := franzClient(t, c.brokers[0], kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DefaultProduceTopic("spread"))
	ctx := franzCtx(t)
	produce := func(p int32, value string) {
		t.Helper()
		if err := producer.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte(value)}).FirstErr(); err != nil {
			t.Fatalf("produce to p%d: %v", p, err)
		}
	}
	// The client learns every partition's leader; p0 is still empty.
	for p := int32(1); p < partitions; p++ {
		produce(p, fmt.Sprintf("warm-%d", p))
	}
	c.moveTo(t, 0, 1, true) // node 0 -> node 1, which the client does not know
	for i := range perPartition {
		for p := range int32(partitions) {
			produce(p, fmt.Sprintf("%d-%d", p, i))
		}
	}
	var refused dto.Metric
	if err := c.brokers[0].srv.m.errors.WithLabelValues("Produce", errLabel(kerr.NotLeaderForPartition.Code)).Write(&refused); err != nil {
		t.Fatal(err)
	}
	if refused.GetCounter().GetValue() < 1 {
		t.Errorf("node 0 never refused the moved partition (%v NOT_LEADER_OR_FOLLOWER answers)", refused.GetCounter().GetValue())
	}
	want := map[string]bool{}
	for p := range int32(partitions) {
		owner := p % 2
		if p == 0 {
			owner = 1
		}
		n := int64(perPartition)
		if p != 0 {
			n++
			want[fmt.Sprintf("warm-%d", p)] = true
		}
		for i := range perPartition {
			want[fmt.Sprintf("%d-%d", p, i)] = true
		}
		if _, hw := c.partition(t, owner, p).Offsets(); hw != n {
			t.Errorf("p%d: owner %d holds %d records, want %d", p, owner, hw, n)
		}
		if _, hw := c.partition(t, 1-owner, p).Offsets(); hw != 0 {
			t.Errorf("p%d: node %d, not its owner, took %d records", p, 1-owner, hw)
		}
	}
	consumeAllOnce(t, ctx, c.brokers[1], want, partitions)
}

// consumeAllOnce reads "spread" from the start through a client
// bootstrapped from b until every wanted value came, and fails on a value
// read twice or not wanted.
func consumeAllOnce(t *testing.T, ctx context.Context, b *testBroker, want map[string]bool, partitions int32) {
	t.Helper()
	offsets := map[int32]kgo.Offset{}
	for p := range partitions {
		offsets[p] = kgo.NewOffset().AtStart()
	}
	consumer, _ := franzClient(t, b, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"spread": offsets}))
	seen := map[string]bool{}
	for len(seen) < len(want) {
		fs := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records: %v", len(seen), len(want), ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			v := string(r.Value)
			if !want[v] || seen[v] {
				t.Errorf("p%d offset %d: unexpected or repeated value %q", r.Partition, r.Offset, v)
			}
			seen[v] = true
		})
	}
}
