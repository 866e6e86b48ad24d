package main

// The multi-process cluster harness: an embedded etcd (one member, or
// three), a real MinIO, and N broker processes run from this test binary
// (see TestMain) with --metadata etcd://, so that tests can SIGKILL,
// SIGSTOP, SIGCONT, SIGTERM and restart any one of them for real. Every
// port is random, every wait is bounded by a deadline.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sediment-io/sediment/cmd/broker/internal/history"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
	"github.com/sediment-io/sediment/storage/objectstore/miniotest"
)

// clusterOpts says what startCluster starts.
type clusterOpts struct {
	Brokers        int           // broker processes, node ids 1..Brokers (default 3)
	EtcdMembers    int           // 1 (default) or 3
	Durability     string        // --durability (default object)
	SessionTimeout time.Duration // --session-timeout (default 3s)
	Flags          []string      // more flags for every broker
	Env            []string      // more environment for every broker (NAME=value)
}

// testCluster is a running cluster: etcd, MinIO and the brokers.
type testCluster struct {
	t         *testing.T
	opts      clusterOpts
	endpoints []string // etcd client endpoints, HOST:PORT
	etcd      *etcdCluster
	prefix    string // the --metadata prefix, without the trailing "/"
	cli       *clientv3.Client
	minio     *miniotest.Server
	store     string // the --object-store URL every broker shares
	nodes     map[int32]*clusterNode
	hist      *history.History // what the cluster did, for the checker
	rec       *etcdRecorder    // records etcd's side of hist from before the first broker
}

// clusterNode is one broker of the cluster: its identity survives a
// restart (same node id, rack, data directory and Kafka address).
type clusterNode struct {
	id   int32
	rack string
	dir  string
	addr string
	proc *brokerProc // the running process; nil before the first start
}

// startCluster starts etcd, takes a fresh bucket on the shared MinIO and
// starts the brokers, each waited for until /readyz answers 200.
func startCluster(t *testing.T, opts clusterOpts) *testCluster {
	t.Helper()
	if opts.Brokers == 0 {
		opts.Brokers = 3
	}
	if opts.Durability == "" {
		opts.Durability = "object"
	}
	if opts.SessionTimeout == 0 {
		opts.SessionTimeout = 3 * time.Second
	}
	c := &testCluster{t: t, opts: opts, prefix: "cluster-" + randomSuffix(), nodes: map[int32]*clusterNode{}}
	c.startEtcd()
	c.hist = history.New()
	c.rec = c.startRecorder(c.hist)
	c.minio = miniotest.Shared(t)
	c.store = c.minio.S3URL(c.minio.NewBucket(t), "sediment")
	for id := int32(1); id <= int32(opts.Brokers); id++ {
		c.nodes[id] = &clusterNode{id: id, rack: fmt.Sprintf("r%d", id), dir: t.TempDir(),
			addr: fmt.Sprintf("127.0.0.1:%d", freePort(t))}
	}
	// Launched together, waited for in turn: the brokers start in parallel.
	for _, id := range c.ids() {
		c.nodes[id].proc = c.launch(c.nodes[id])
	}
	for _, id := range c.ids() {
		c.nodes[id].proc.waitReady()
	}
	return c
}

// startEtcd starts the embedded etcd and a client of the test's own on it.
func (c *testCluster) startEtcd() {
	c.t.Helper()
	if c.opts.EtcdMembers > 1 {
		c.etcd = startEtcdCluster(c.t, c.opts.EtcdMembers)
		c.endpoints = c.etcd.endpoints()
	} else {
		endpoint, _ := etcdtest.Start(c.t)
		c.endpoints = []string{endpoint}
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.endpoints, DialTimeout: 10 * time.Second})
	if err != nil {
		c.t.Fatalf("etcd client: %v", err)
	}
	c.t.Cleanup(func() { cli.Close() })
	c.cli = cli
}

func randomSuffix() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ids returns the node ids in order.
func (c *testCluster) ids() []int32 {
	var ids []int32
	for id := range c.nodes {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// metadataURL is the --metadata flag every broker shares.
func (c *testCluster) metadataURL() string {
	return "etcd://" + strings.Join(c.endpoints, ",") + "/" + c.prefix
}

// flags are node n's broker flags (besides --listen, --http-listen and
// --data-dir, which startBinary adds).
func (c *testCluster) flags(n *clusterNode) []string {
	return append([]string{
		"--metadata", c.metadataURL(),
		"--node-id", fmt.Sprint(n.id),
		"--rack", n.rack,
		"--durability", c.opts.Durability,
		"--session-timeout", c.opts.SessionTimeout.String(),
		"--object-store", c.store,
	}, c.opts.Flags...)
}

// start starts node id's broker (again, after a kill or a stop: same data
// directory and Kafka address) and waits until it is ready.
func (c *testCluster) start(id int32) *brokerProc {
	c.t.Helper()
	n := c.node(id)
	if n.proc != nil && n.proc.cmd.ProcessState == nil {
		c.t.Fatalf("node %d: start while it runs", id)
	}
	n.proc = c.launch(n)
	n.proc.waitReady()
	return n.proc
}

// launch starts node n's broker process (this test binary, see TestMain)
// without waiting for it, as startBinary does.
func (c *testCluster) launch(n *clusterNode) *brokerProc {
	c.t.Helper()
	httpAddr := fmt.Sprintf("127.0.0.1:%d", freePort(c.t))
	args := append([]string{"serve", "--listen", n.addr, "--http-listen", httpAddr, "--data-dir", n.dir}, c.flags(n)...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(append(os.Environ(), "SEDIMENT_TEST_BROKER=1"), c.minio.Env()...), c.opts.Env...)
	// Pdeathsig: a broker never outlives the test binary, even a stopped one.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("node %d: %v", n.id, err)
	}
	p := &brokerProc{t: c.t, cmd: cmd, addr: n.addr, http: httpAddr, dataDir: n.dir, exited: make(chan error, 1), logs: newLogTail()}
	go p.logs.consume(stderr)
	go func() { p.exited <- cmd.Wait() }()
	c.t.Cleanup(p.kill)
	return p
}

func (c *testCluster) node(id int32) *clusterNode {
	c.t.Helper()
	n, ok := c.nodes[id]
	if !ok {
		c.t.Fatalf("no node %d in the cluster", id)
	}
	return n
}

// proc returns node id's running process.
func (c *testCluster) proc(id int32) *brokerProc {
	c.t.Helper()
	n := c.node(id)
	if n.proc == nil {
		c.t.Fatalf("node %d was never started", id)
	}
	return n.proc
}

// kill sends SIGKILL to node id and waits until the process is gone.
func (c *testCluster) kill(id int32) { c.proc(id).kill() }

// terminate sends SIGTERM to node id (graceful: it hands its partitions
// over) and waits until it exits; its exit error is returned.
func (c *testCluster) terminate(id int32) error { return c.proc(id).terminate() }

// pause sends SIGSTOP: the process keeps its sockets but runs nothing, as
// a long GC pause or a frozen VM does.
func (c *testCluster) pause(id int32) { c.signal(id, syscall.SIGSTOP) }

// resume sends SIGCONT to a paused node.
func (c *testCluster) resume(id int32) { c.signal(id, syscall.SIGCONT) }

func (c *testCluster) signal(id int32, sig syscall.Signal) {
	c.t.Helper()
	p := c.proc(id)
	if err := p.cmd.Process.Signal(sig); err != nil {
		c.t.Fatalf("node %d: %v: %v", id, sig, err)
	}
}

// restart kills node id with SIGKILL and starts it again.
func (c *testCluster) restart(id int32) *brokerProc {
	c.t.Helper()
	c.kill(id)
	return c.start(id)
}

// addrs returns the Kafka addresses of the given nodes (every node when
// none is given), to seed clients with.
func (c *testCluster) addrs(ids ...int32) []string {
	if len(ids) == 0 {
		ids = c.ids()
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = c.node(id).addr
	}
	return out
}

// logs returns what every broker logged last, for failure messages.
func (c *testCluster) logs() string {
	var b strings.Builder
	for _, id := range c.ids() {
		if p := c.nodes[id].proc; p != nil {
			fmt.Fprintf(&b, "--- node %d ---\n%s", id, p.logs.String())
		}
	}
	return b.String()
}

// nodeOf returns the node whose Kafka address is addr.
func (c *testCluster) nodeOf(addr string) (int32, bool) {
	for id, n := range c.nodes {
		if n.addr == addr {
			return id, true
		}
	}
	return 0, false
}

// waitFor polls cond until it holds or d passes; then it fails with what
// the last call of cond said and the brokers' logs.
func (c *testCluster) waitFor(d time.Duration, what string, cond func(ctx context.Context) (bool, string)) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	last := ""
	for {
		ok, state := cond(ctx)
		if ok {
			return
		}
		last = state
		select {
		case <-ctx.Done():
			c.t.Fatalf("%s: not so after %v (last: %s)\n%s", what, d, last, c.logs())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
