package main

// etcd for the cluster harness: a three-member embedded etcd (one process,
// three members on loopback, each with its own data directory), and the
// reads of the cluster's keys (CONTRACT18's layout) that tests check the
// brokers against.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/sediment-io/sediment/cmd/broker/internal/history"
)

// etcdCluster is a multi-member embedded etcd.
type etcdCluster struct {
	t       *testing.T
	mu      sync.Mutex // guards members
	members []*embed.Etcd
	clients []string // client endpoint of each member, by index
}

// startEtcdCluster starts n members that form one cluster and waits until
// every one serves. The peer ports are picked up front: the initial
// cluster names them all.
func startEtcdCluster(t *testing.T, n int) *etcdCluster {
	t.Helper()
	ec := &etcdCluster{t: t}
	var initial []string
	cfgs := make([]*embed.Config, n)
	for i := range n {
		cfg := embed.NewConfig()
		cfg.Name = fmt.Sprintf("m%d", i)
		cfg.Dir = t.TempDir()
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", freePort(t))}
		peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", freePort(t))}
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
		initial = append(initial, cfg.Name+"="+peer.String())
		ec.clients = append(ec.clients, client.Host)
		cfgs[i] = cfg
	}
	// Members wait for each other to form a quorum: start them all, then wait.
	for _, cfg := range cfgs {
		cfg.InitialCluster = strings.Join(initial, ",")
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			ec.stopAll()
			t.Fatalf("etcd member %s: %v", cfg.Name, err)
		}
		ec.members = append(ec.members, e)
	}
	t.Cleanup(ec.stopAll)
	for _, e := range ec.members {
		select {
		case <-e.Server.ReadyNotify():
		case err := <-e.Err():
			t.Fatalf("etcd member %s: %v", e.Config().Name, err)
		case <-time.After(60 * time.Second):
			t.Fatalf("etcd member %s not ready after 60s", e.Config().Name)
		}
	}
	return ec
}

func (ec *etcdCluster) endpoints() []string { return append([]string(nil), ec.clients...) }

// leader returns the index of the member that leads now, or -1.
func (ec *etcdCluster) leader() int {
	ec.mu.Lock()
	defer ec.mu.Unlock()
	for i, e := range ec.members {
		if e != nil && e.Server.Leader() == e.Server.MemberID() {
			return i
		}
	}
	return -1
}

// stopMember stops member i (its client and peer ports close, as a killed
// etcd's do).
func (ec *etcdCluster) stopMember(i int) {
	ec.mu.Lock()
	e := ec.members[i]
	ec.members[i] = nil
	ec.mu.Unlock()
	if e != nil {
		e.Close()
	}
}

func (ec *etcdCluster) stopAll() {
	for i := range ec.members {
		ec.stopMember(i)
	}
}

// ownerValue is the value of an own/parts key.
type ownerValue struct {
	NodeID int32 `json:"node_id"`
	Epoch  int32 `json:"epoch"`
}

// owned is one partition's owner key as read: who, at which epoch, and the
// revision it was written at (the fence).
type owned struct {
	Node     int32
	Epoch    int32
	Revision int64
}

// key is a cluster key under the test's prefix.
func (c *testCluster) key(k string) string { return c.prefix + "/" + k }

// topicIDs returns the topics' ids (hex, as keys spell them) by name.
func (c *testCluster) topicIDs(ctx context.Context) (map[string]string, error) {
	resp, err := c.cli.Get(ctx, c.key("topics/"), clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("get topics: %w", err)
	}
	out := map[string]string{}
	for _, kv := range resp.Kvs {
		var topic struct {
			Name string `json:"name"`
			ID   string `json:"id"`
		}
		if err := json.Unmarshal(kv.Value, &topic); err != nil {
			return nil, fmt.Errorf("topic %s: %w", kv.Key, err)
		}
		out[topic.Name] = topic.ID
	}
	return out, nil
}

// owners reads every own/parts key of topic in one Get and returns them
// by partition, with the revision the Get read at.
func (c *testCluster) owners(ctx context.Context, topic string) (map[int32]owned, int64, error) {
	ids, err := c.topicIDs(ctx)
	if err != nil {
		return nil, 0, err
	}
	id, ok := ids[topic]
	if !ok {
		return nil, 0, fmt.Errorf("no topic %q in etcd", topic)
	}
	resp, err := c.cli.Get(ctx, c.key("own/parts/"+id+"/"), clientv3.WithPrefix())
	if err != nil {
		return nil, 0, fmt.Errorf("get owners: %w", err)
	}
	out := map[int32]owned{}
	for _, kv := range resp.Kvs {
		_, p, err := parseOwnerKey(strings.TrimPrefix(string(kv.Key), c.key("")))
		if err != nil {
			return nil, 0, err
		}
		var v ownerValue
		if err := json.Unmarshal(kv.Value, &v); err != nil {
			return nil, 0, fmt.Errorf("owner key %s: %w", kv.Key, err)
		}
		out[p] = owned{Node: v.NodeID, Epoch: v.Epoch, Revision: kv.ModRevision}
	}
	return out, resp.Header.Revision, nil
}

// parseOwnerKey splits own/parts/<topic-id-hex>/<partition %010d>.
func parseOwnerKey(key string) (topicID string, p int32, err error) {
	rest, ok := strings.CutPrefix(key, "own/parts/")
	id, part, ok2 := strings.Cut(rest, "/")
	n, perr := strconv.ParseInt(part, 10, 32)
	if !ok || !ok2 || perr != nil {
		return "", 0, fmt.Errorf("owner key %q: want own/parts/<topic-id>/<partition>", key)
	}
	return id, int32(n), nil
}

// parseIndexKey splits index/<topic-id-hex>/<partition %010d>/<base %020d>.
func parseIndexKey(key string) (topicID string, p int32, err error) {
	rest, ok := strings.CutPrefix(key, "index/")
	parts := strings.Split(rest, "/")
	if !ok || len(parts) != 3 {
		return "", 0, fmt.Errorf("index key %q: want index/<topic-id>/<partition>/<base>", key)
	}
	n, err := strconv.ParseInt(parts[1], 10, 32)
	if err != nil {
		return "", 0, fmt.Errorf("index key %q: %w", key, err)
	}
	return parts[0], int32(n), nil
}

// uploadNode returns the node that wrote an upload object, from its key
// data/<ms>-<node>-<random>.obj; ok is false for other objects (compacted
// ones say no writer).
func uploadNode(object string) (int32, bool) {
	name, ok := strings.CutPrefix(object, "data/")
	fields := strings.Split(strings.TrimSuffix(name, ".obj"), "-")
	if !ok || len(fields) != 3 {
		return 0, false
	}
	n, err := strconv.ParseInt(fields[1], 10, 32)
	return int32(n), err == nil
}

// waitOwned waits until every partition of topic has an owner among the
// running nodes (want: nil for any) and returns the owners.
func (c *testCluster) waitOwned(topic string, partitions int32, want func(node int32) bool) map[int32]owned {
	c.t.Helper()
	var got map[int32]owned
	c.waitFor(30*time.Second, fmt.Sprintf("every partition of %s owned", topic), func(ctx context.Context) (bool, string) {
		owners, _, err := c.owners(ctx, topic)
		if err != nil {
			return false, err.Error()
		}
		for p := range partitions {
			o, ok := owners[p]
			if !ok || (want != nil && !want(o.Node)) {
				return false, fmt.Sprintf("owners %v", owners)
			}
		}
		got = owners
		return true, ""
	})
	return got
}

// sampleOwners reads the owner keys of every topic once, as a history
// sample at the revision of the read.
func (c *testCluster) sampleOwners(ctx context.Context, names map[string]string) (history.Sample, error) {
	resp, err := c.cli.Get(ctx, c.key("own/parts/"), clientv3.WithPrefix())
	if err != nil {
		return history.Sample{}, fmt.Errorf("sample owners: %w", err)
	}
	s := history.Sample{Revision: resp.Header.Revision, Owners: map[history.Partition]int32{}, Source: "etcd"}
	for _, kv := range resp.Kvs {
		id, p, err := parseOwnerKey(strings.TrimPrefix(string(kv.Key), c.key("")))
		if err != nil {
			return history.Sample{}, err
		}
		var v ownerValue
		if err := json.Unmarshal(kv.Value, &v); err != nil {
			return history.Sample{}, fmt.Errorf("owner key %s: %w", kv.Key, err)
		}
		if name, ok := names[id]; ok {
			s.Owners[history.Partition{Topic: name, Partition: p}] = v.NodeID
		}
	}
	return s, nil
}
