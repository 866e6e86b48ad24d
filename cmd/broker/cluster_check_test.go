package main

// Checks the cluster tests share: the Metadata answers of every broker
// against the owner keys in etcd, and the history checker over what the
// test recorded.

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/cmd/broker/internal/history"
)

// checkHistory waits until the recorder has every etcd change, then runs
// the checker over the history and final (nil: the etcd rules alone) and
// fails the test with the first violations.
func (c *testCluster) checkHistory(final map[history.Partition][]history.Entry) *history.Result {
	c.t.Helper()
	c.rec.sync()
	r := c.hist.Check(final)
	c.t.Logf("history: %d acked, %d failed produces, %d records, %d reads, %d commits, %d owner changes",
		r.Acked, r.Failed, r.Records, r.Reads, r.Commits, len(c.hist.OwnerChanges()))
	if err := r.Err(); err != nil {
		c.t.Fatal(err)
	}
	return r
}

// metadataFrom asks the broker at addr itself (not any broker the client
// picks) for the metadata of topic.
func metadataFrom(ctx context.Context, t *testing.T, addr, topic string) (*kmsg.MetadataResponse, error) {
	cl := newClusterClient(t, []string{addr})
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil {
		return nil, fmt.Errorf("metadata from %s: %w", addr, err)
	}
	return resp, nil
}

// metadataMatchesOwners says whether the Metadata answer of the broker at
// addr lists every live broker with its address and rack, and gives, for
// each partition of topic, the owner in etcd as leader and the owner
// epoch as leader epoch, with replicas and ISR [owner]. The string says
// the first difference.
func (c *testCluster) metadataMatchesOwners(ctx context.Context, addr, topic string, partitions int32, live []int32) (bool, string) {
	resp, err := metadataFrom(ctx, c.t, addr, topic)
	if err != nil {
		return false, err.Error()
	}
	if why := c.brokersDiffer(resp, live); why != "" {
		return false, addr + ": " + why
	}
	owners, _, err := c.owners(ctx, topic)
	if err != nil {
		return false, err.Error()
	}
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 || len(resp.Topics[0].Partitions) != int(partitions) {
		return false, fmt.Sprintf("%s: topic %s answered %+v", addr, topic, resp.Topics)
	}
	for _, p := range resp.Topics[0].Partitions {
		o, ok := owners[p.Partition]
		switch {
		case !ok:
			return false, fmt.Sprintf("%s/%d has no owner key", topic, p.Partition)
		case p.ErrorCode != 0:
			return false, fmt.Sprintf("%s: %s/%d: %v", addr, topic, p.Partition, kerr.ErrorForCode(p.ErrorCode))
		case p.Leader != o.Node || p.LeaderEpoch != o.Epoch:
			return false, fmt.Sprintf("%s: %s/%d leader %d epoch %d, own/ says node %d epoch %d",
				addr, topic, p.Partition, p.Leader, p.LeaderEpoch, o.Node, o.Epoch)
		case len(p.Replicas) != 1 || p.Replicas[0] != o.Node || len(p.ISR) != 1 || p.ISR[0] != o.Node:
			return false, fmt.Sprintf("%s: %s/%d replicas %v ISR %v, want [%d]", addr, topic, p.Partition, p.Replicas, p.ISR, o.Node)
		}
	}
	return true, ""
}

// brokersDiffer says how a Metadata answer's broker list differs from the
// live nodes (their Kafka addresses and racks), or "".
func (c *testCluster) brokersDiffer(resp *kmsg.MetadataResponse, live []int32) string {
	got := map[int32]string{}
	for _, b := range resp.Brokers {
		rack := ""
		if b.Rack != nil {
			rack = *b.Rack
		}
		got[b.NodeID] = fmt.Sprintf("%s:%d rack %q", b.Host, b.Port, rack)
	}
	want := map[int32]string{}
	for _, id := range live {
		n := c.node(id)
		want[id] = fmt.Sprintf("%s rack %q", n.addr, n.rack)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Sprintf("brokers %v, want %v", got, want)
	}
	return ""
}

// waitMetadataMatches waits until every live broker's Metadata answer
// matches the owner keys (see metadataMatchesOwners).
func (c *testCluster) waitMetadataMatches(topic string, partitions int32, live []int32) {
	c.t.Helper()
	c.waitFor(30*time.Second, "every broker's Metadata matches own/", func(ctx context.Context) (bool, string) {
		for _, id := range live {
			if ok, why := c.metadataMatchesOwners(ctx, c.node(id).addr, topic, partitions, live); !ok {
				return false, why
			}
		}
		return true, ""
	})
}

// ownedBy returns the partitions node owns in owners, in order.
func ownedBy(owners map[int32]owned, node int32) []int32 {
	var out []int32
	for p, o := range owners {
		if o.Node == node {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// ackedAfter says whether the history holds an ack on each of the
// partitions of topic that started after since.
func ackedAfter(hist *history.History, topic string, parts []int32, since time.Time) (bool, string) {
	seen := map[int32]bool{}
	for _, p := range hist.Produces() {
		if p.Acked() && p.Partition.Topic == topic && p.Start.After(since) {
			seen[p.Partition.Partition] = true
		}
	}
	for _, p := range parts {
		if !seen[p] {
			return false, fmt.Sprintf("no ack on %s/%d since the fault", topic, p)
		}
	}
	return true, ""
}
