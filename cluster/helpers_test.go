package cluster

import (
	"context"
	"log/slog"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sediment-io/sediment/internal/testwait"
	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

// testTTL is the session timeout of the tests: etcd's smallest lease.
const testTTL = 2 * time.Second

type testCluster struct {
	t        *testing.T
	endpoint string
	prefix   string
	reg      *registry
	kv       *etcdkv.KV // the test's own view of the metadata
	meta     *metadata.Store
	topics   []metadata.Topic
}

func newTestCluster(t *testing.T, endpoint, prefix string) *testCluster {
	t.Cleanup(func() { checkNoLeaks(t) }) // first registered: runs after every node closed
	c := &testCluster{t: t, endpoint: endpoint, prefix: prefix, reg: newRegistry()}
	c.kv = etcdtest.OpenKV(t, endpoint, prefix)
	c.meta = metadata.NewStore(c.kv)
	t.Cleanup(func() { c.reg.check(t) })
	return c
}

func (c *testCluster) createTopic(name string, partitions int32) metadata.Topic {
	topic := metadata.Topic{Name: name, ID: metadata.NewTopicID(), Partitions: partitions}
	if err := c.meta.CreateTopic(context.Background(), topic); err != nil {
		c.t.Fatal(err)
	}
	c.topics = append(c.topics, topic)
	return topic
}

type testNode struct {
	*Node
	owner *fakeOwner
	kv    *etcdkv.KV
}

// start starts node id with its own etcd client; the test closes it.
func (c *testCluster) start(id int32, durability string, hooks func(*Node)) (*testNode, error) {
	return c.startOn(etcdtest.OpenKV(c.t, c.endpoint, c.prefix), id, durability, hooks)
}

// startOn is start on an etcd client the caller opened.
func (c *testCluster) startOn(kv *etcdkv.KV, id int32, durability string, hooks func(*Node)) (*testNode, error) {
	owner := newFakeOwner(id, c.reg)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: testLogLevel()}))
	cfg := Config{Client: kv.Client(), Prefix: kv.Prefix(), Meta: metadata.NewStore(kv),
		NodeID: id, Host: "127.0.0.1", Port: 9000 + id, Durability: durability, SessionTimeout: testTTL,
		Partitions: owner, Shards: owner, Logger: logger.With("test_node", id)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := start(ctx, cfg, hooks)
	if err != nil {
		return nil, err
	}
	c.t.Cleanup(func() { closeNode(c.t, n) })
	return &testNode{Node: n, owner: owner, kv: kv}, nil
}

func (c *testCluster) mustStart(id int32, durability string, hooks func(*Node)) *testNode {
	c.t.Helper()
	n, err := c.start(id, durability, hooks)
	if err != nil {
		c.t.Fatal(err)
	}
	return n
}

func closeNode(t *testing.T, n *Node) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := n.Close(ctx); err != nil {
		t.Errorf("close node %d: %v", n.cfg.NodeID, err)
	}
}

// slots lists every partition of the cluster's topics and every shard, as
// the fakes name them.
func (c *testCluster) slots() []string {
	var out []string
	for _, t := range c.topics {
		for p := range t.Partitions {
			out = append(out, partName(t.ID, p))
		}
	}
	for s := range int32(Shards) {
		out = append(out, shardName(s))
	}
	return out
}

// converged reports whether every slot is served by exactly one of nodes,
// which holds its fence, and every node's view names it as the leader.
func (c *testCluster) converged(nodes ...*testNode) bool {
	for _, t := range c.topics {
		for p := range t.Partitions {
			if !c.oneOwner(nodes, partName(t.ID, p), func(n *testNode) (bool, int32, bool) {
				_, ok := n.Fence(t.ID, p)
				leader, _, lok := n.Leader(t.ID, p)
				return ok, leader, lok
			}) {
				return false
			}
		}
	}
	for s := range int32(Shards) {
		if !c.oneOwner(nodes, shardName(s), func(n *testNode) (bool, int32, bool) {
			_, ok := n.ShardFence(s)
			leader, lok := n.ShardLeader(s)
			return ok, leader, lok
		}) {
			return false
		}
	}
	return true
}

func (c *testCluster) oneOwner(nodes []*testNode, key string, probe func(*testNode) (fenced bool, leader int32, ok bool)) bool {
	owner := int32(-1)
	for _, n := range nodes {
		fenced, _, _ := probe(n)
		if n.owner.owns(key) != fenced {
			return false
		}
		if fenced {
			if owner >= 0 {
				return false
			}
			owner = n.cfg.NodeID
		}
	}
	if owner < 0 {
		return false
	}
	for _, n := range nodes {
		if _, leader, ok := probe(n); !ok || leader != owner {
			return false
		}
	}
	return true
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, within, cond, "not within %v: %s", within, what)
}

// testLogLevel is Warn, or Debug with SEDIMENT_TEST_DEBUG set.
func testLogLevel() slog.Level {
	if os.Getenv("SEDIMENT_TEST_DEBUG") != "" {
		return slog.LevelDebug
	}
	return slog.LevelWarn
}

// logSignal is a log destination that closes seen when a line holds
// want.
type logSignal struct {
	want string
	seen chan struct{}
	once sync.Once
}

func (l *logSignal) Write(b []byte) (int, error) {
	if strings.Contains(string(b), l.want) {
		l.once.Do(func() { close(l.seen) })
	}
	return len(b), nil
}

// checkNoLeaks fails when goroutines this package labelled (and those they
// started, which inherit the label) outlive every node and client.
func checkNoLeaks(t *testing.T) {
	var left string
	if !testwait.Poll(10*time.Second, func() bool { left = labelledGoroutines(); return left == "" }) {
		t.Errorf("goroutines left running:\n%s", left)
	}
}

func labelledGoroutines() string {
	var buf strings.Builder
	pprof.Lookup("goroutine").WriteTo(&buf, 1)
	var left []string
	for _, stanza := range strings.Split(buf.String(), "\n\n") {
		if strings.Contains(stanza, `"cluster":`) {
			left = append(left, stanza)
		}
	}
	return strings.Join(left, "\n\n")
}
