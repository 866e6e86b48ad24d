//go:build compose

package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sediment-io/sediment/metadata/etcdkv"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestComposeClusterUp: `docker compose --profile cluster up` starts etcd,
// MinIO and the three brokers, all healthy. A client given one broker's
// published address only creates, produces to and reads back a topic,
// once through each broker; every broker's Metadata lists the three
// brokers (advertised address and rack as the file gives them) and names,
// for every partition, the owner and owner epoch of its own/ key in the
// etcd the file starts. Then the container of one partition's owner is
// killed with SIGKILL: the two others own every partition within the
// lease and a few seconds, their Metadata lists two brokers and matches
// own/, and every record acknowledged before the kill is read back through
// each of them, with a new round produced and read after it.
func TestComposeClusterUp(t *testing.T) {
	e := findComposeEngine(t, "cluster")
	f := readCompose(t)
	c, services := composeCluster(t, f)
	t.Cleanup(func() {
		if t.Failed() {
			for _, name := range composeClusterBrokers {
				t.Logf("%s logs:\n%s", name, e.logs(name))
			}
		}
		e.down(t)
	})
	start := time.Now()
	e.up(t, f)
	t.Logf("cluster profile up and healthy after %v", time.Since(start).Round(time.Second))
	c.connectEtcd(t)

	const partitions, total = 6, 1200
	ids := c.ids()
	topics := map[int32]string{}
	for i, id := range ids {
		via, next := c.node(id).addr, c.node(ids[(i+1)%len(ids)]).addr
		topic := fmt.Sprintf("via-broker-%d", id)
		topics[id] = topic
		createTopics(t, via, topic, partitions)
		c.waitOwned(topic, partitions, nil)
		produceNumbered(t, via, topic, total, partitions)
		checkNumbered(t, readTopic(t, next, topic), total, partitions)
	}
	for _, topic := range topics {
		c.waitMetadataMatches(topic, partitions, ids)
	}

	owners := c.waitOwned(topics[ids[0]], partitions, nil)
	victim := owners[0].Node
	killed := time.Now()
	e.run(t, 2*time.Minute, "kill", "-s", "SIGKILL", services[victim])
	live := without(ids, victim)
	for _, topic := range topics {
		c.waitOwned(topic, partitions, func(node int32) bool { return node != victim })
	}
	t.Logf("%s killed; every partition owned by the two others after %v", services[victim], time.Since(killed).Round(time.Millisecond))
	for _, topic := range topics {
		c.waitMetadataMatches(topic, partitions, live)
		for _, id := range live {
			checkNumbered(t, readTopic(t, c.node(id).addr, topic), total, partitions)
		}
	}
	after := "after-kill"
	createTopics(t, c.node(live[0]).addr, after, partitions)
	c.waitOwned(after, partitions, func(node int32) bool { return node != victim })
	produceNumbered(t, c.node(live[0]).addr, after, total, partitions)
	checkNumbered(t, readTopic(t, c.node(live[1]).addr, after), total, partitions)
	t.Logf("a new topic produced and read back %v after the kill", time.Since(killed).Round(time.Millisecond))
}

// composeCluster is a testCluster over the file's cluster brokers, seen
// from this machine: each node's id, rack and published address come
// from its service's command, the etcd prefix from --metadata. It also
// returns each node's service name.
func composeCluster(t *testing.T, f composeFile) (*testCluster, map[int32]string) {
	t.Helper()
	c := &testCluster{t: t, nodes: map[int32]*clusterNode{}}
	services := map[int32]string{}
	for _, name := range composeClusterBrokers {
		s := f.Services[name]
		id, err := strconv.ParseInt(composeFlag(s, "node-id"), 10, 32)
		if err != nil {
			t.Fatalf("%s: --node-id: %v", name, err)
		}
		cfg, err := etcdkv.ParseURL(composeFlag(s, "metadata"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c.prefix = strings.TrimSuffix(cfg.Prefix, "/")
		c.nodes[int32(id)] = &clusterNode{id: int32(id), rack: composeFlag(s, "rack"), addr: composeFlag(s, "advertise")}
		services[int32(id)] = name
	}
	etcd := f.Services["etcd"]
	for _, p := range etcd.Ports {
		if host, _, ok := strings.Cut(p, ":"); ok && host == "2379" {
			c.endpoints = []string{"localhost:2379"}
		}
	}
	if c.endpoints == nil {
		t.Fatalf("the etcd service does not publish 2379 (ports %q)", etcd.Ports)
	}
	return c, services
}

// connectEtcd opens the client the testCluster's checks read own/ with.
func (c *testCluster) connectEtcd(t *testing.T) {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.endpoints, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := cli.Get(ctx, c.key("brokers/"), clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil {
		t.Fatalf("etcd on %v: %v", c.endpoints, err)
	}
	c.cli = cli
}
