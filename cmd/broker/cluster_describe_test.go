package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sediment-io/sediment/cluster"
	"github.com/sediment-io/sediment/groupcoord"
)

// TestClusterDescribe (issue 18, operator CLI): `broker cluster describe`
// against a running three-broker cluster, in json and as a table, lists
// the three brokers with their addresses and racks, the controller that
// the brokers' Metadata names, every partition's owner and epoch as its
// own/ key records them (placed there), and the 64 coordinator shards
// with their owners as their own/shards keys record them. A takeover of
// a gone object-mode broker reports no loss.
func TestClusterDescribe(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	const topic, partitions = "described", 12
	createTopics(t, c.addrs(1)[0], topic, partitions)
	owners := c.waitOwned(topic, partitions, nil)
	c.waitFor(30*time.Second, "describe matches etcd", func(ctx context.Context) (bool, string) {
		return c.describeMatches(ctx, topic, partitions)
	})
	d := c.describe()
	for _, id := range c.ids() {
		adm := kadm.NewClient(newClusterClient(t, c.addrs(id)))
		mds, err := adm.BrokerMetadata(testCtx(t, 10*time.Second))
		adm.Close()
		if err != nil {
			t.Fatal(err)
		}
		if mds.Controller != d.Controller {
			t.Errorf("node %d's Metadata names controller %d, describe %d", id, mds.Controller, d.Controller)
		}
	}

	stdout, stderr, code := brokerCLI(t, nil, "cluster", "describe", "--metadata", c.metadataURL())
	if code != 0 {
		t.Fatalf("cluster describe: exit %d\n%s", code, stderr)
	}
	if d.Revision <= 0 {
		t.Errorf("describe --output json names revision %d, want the etcd revision it read at", d.Revision)
	}
	want := []string{`(?m)^revision\s+[1-9][0-9]*$`, fmt.Sprintf(`(?m)^controller\s+%d$`, d.Controller)}
	for _, id := range c.ids() {
		n := c.node(id)
		want = append(want, fmt.Sprintf(`(?m)^%d\s+%s\s+%s\s+object\s+\S+$`, id, regexp.QuoteMeta(n.addr), n.rack))
	}
	for p, o := range owners {
		want = append(want, fmt.Sprintf(`(?m)^%s\s+%d\s+%d\s+%d\s+%d\s+0$`, topic, p, o.Node, o.Node, o.Epoch))
	}
	for _, s := range d.Shards {
		want = append(want, fmt.Sprintf(`(?m)^%d\s+%d\s+%d$`, s.Shard, s.Owner, s.Owner))
	}
	for _, re := range want {
		if !regexp.MustCompile(re).MatchString(stdout) {
			t.Errorf("the table has no line matching %s", re)
		}
	}
	if t.Failed() {
		t.Logf("table:\n%s", stdout)
	}
	if _, stderr, code := brokerCLI(t, nil, "cluster", "describe", "--metadata", c.metadataURL(), "--output", "yaml"); code != 2 || !strings.Contains(stderr, "table or json") {
		t.Errorf("--output yaml: exit %d, want 2 and a message naming table and json\n%s", code, stderr)
	}

	// A takeover of a gone object-mode broker loses nothing, and says so.
	c.kill(3)
	c.waitGone(3)
	stdout, stderr, code = brokerCLI(t, nil, "partitions", "takeover", "--metadata", c.metadataURL(), "--from", "3", "--accept-loss")
	if code != 0 || strings.Contains(stdout, "are lost") || !strings.Contains(stdout, "nothing is lost") {
		t.Errorf("takeover of gone object-mode node 3: exit %d, want a report that nothing is lost\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}

// describeMatches says whether `broker cluster describe --output json`
// agrees with etcd: the three brokers, the partitions of topic placed on
// and owned by their own/ key's node at its epoch, and every shard placed
// on and owned by its own/shards key's node.
func (c *testCluster) describeMatches(ctx context.Context, topic string, partitions int32) (bool, string) {
	owners, _, err := c.owners(ctx, topic)
	if err != nil {
		return false, err.Error()
	}
	shards, err := c.shardOwners(ctx)
	if err != nil {
		return false, err.Error()
	}
	d := c.describe()
	var brokers []string
	for _, b := range d.Brokers {
		brokers = append(brokers, fmt.Sprintf("%d@%s:%d/%s", b.NodeID, b.Host, b.Port, b.Rack))
	}
	var want []string
	for _, id := range c.ids() {
		want = append(want, fmt.Sprintf("%d@%s/%s", id, c.node(id).addr, c.node(id).rack))
	}
	if !slices.Equal(brokers, want) {
		return false, fmt.Sprintf("brokers %v, want %v", brokers, want)
	}
	if !slices.Contains(c.ids(), d.Controller) {
		return false, fmt.Sprintf("controller %d", d.Controller)
	}
	n := int32(0)
	for _, p := range d.Partitions {
		if p.Topic != topic {
			continue
		}
		n++
		o := owners[p.Partition]
		if p.Owner != o.Node || p.Epoch != o.Epoch || p.Placed != o.Node || p.PlacedOnGoneNode {
			return false, fmt.Sprintf("%s/%d: describe says placed %d owner %d epoch %d; own/ says node %d epoch %d", topic, p.Partition, p.Placed, p.Owner, p.Epoch, o.Node, o.Epoch)
		}
	}
	if n != partitions {
		return false, fmt.Sprintf("describe lists %d partitions of %s, want %d", n, topic, partitions)
	}
	return shardsMatch(d.Shards, shards)
}

func shardsMatch(got []cluster.ShardPlacement, owners map[int32]int32) (bool, string) {
	if len(got) != groupcoord.Shards {
		return false, fmt.Sprintf("describe lists %d shards, want %d", len(got), groupcoord.Shards)
	}
	for i, s := range got {
		o, ok := owners[s.Shard]
		if s.Shard != int32(i) || !ok || s.Owner != o || s.Placed != o {
			return false, fmt.Sprintf("shard %d: describe says placed %d owner %d; own/shards says %d (%v)", s.Shard, s.Placed, s.Owner, o, ok)
		}
	}
	return true, ""
}

// shardOwners reads every own/shards key: the owner by shard.
func (c *testCluster) shardOwners(ctx context.Context) (map[int32]int32, error) {
	resp, err := c.cli.Get(ctx, c.key("own/shards/"), clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("get shard owners: %w", err)
	}
	out := map[int32]int32{}
	for _, kv := range resp.Kvs {
		var shard int32
		if _, err := fmt.Sscanf(strings.TrimPrefix(string(kv.Key), c.key("own/shards/")), "%d", &shard); err != nil {
			return nil, fmt.Errorf("shard key %s: %w", kv.Key, err)
		}
		var v struct {
			NodeID int32 `json:"node_id"`
		}
		if err := json.Unmarshal(kv.Value, &v); err != nil {
			return nil, fmt.Errorf("shard key %s: %w", kv.Key, err)
		}
		out[shard] = v.NodeID
	}
	return out, nil
}
