package main

// Tests of the cluster harness itself, without brokers: the three-member
// etcd survives the loss of its leader, and the recorder turns owner keys
// and index commits written by hand (as brokers would write them) into a
// history in which the checker finds an unfenced commit.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sediment-io/sediment/cmd/broker/internal/history"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
	"github.com/sediment-io/sediment/storage/objectstore/miniotest"
)

// harnessOnly is a testCluster with etcd and the recorder but no broker.
func harnessOnly(t *testing.T, members int) *testCluster {
	c := &testCluster{t: t, opts: clusterOpts{EtcdMembers: members}, prefix: "harness-" + randomSuffix(), nodes: map[int32]*clusterNode{}}
	c.startEtcd()
	c.hist = history.New()
	c.rec = c.startRecorder(c.hist)
	return c
}

// TestClusterHarnessEtcdLeaderLoss: the three-member etcd elects a new
// leader when its leader stops, and a client of all three endpoints keeps
// writing.
func TestClusterHarnessEtcdLeaderLoss(t *testing.T) {
	c := harnessOnly(t, 3)
	ctx := testCtx(t, 60*time.Second)
	if _, err := c.cli.Put(ctx, c.key("before"), "1"); err != nil {
		t.Fatal(err)
	}
	old := c.etcd.leader()
	if old < 0 {
		t.Fatal("no etcd leader")
	}
	c.etcd.stopMember(old)
	c.waitFor(30*time.Second, "a new etcd leader", func(ctx context.Context) (bool, string) {
		l := c.etcd.leader()
		return l >= 0 && l != old, fmt.Sprintf("leader %d", l)
	})
	c.waitFor(30*time.Second, "a write after the leader's loss", func(ctx context.Context) (bool, string) {
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := c.cli.Put(wctx, c.key("after"), "1")
		return err == nil, fmt.Sprint(err)
	})
}

// TestClusterHarnessRecorder: owner keys put on a lease, released and
// taken over, and index commits of upload objects, as brokers write them,
// come out of the recorder as owner changes and commits; the checker
// passes the fenced ones and names the commit of a former owner.
func TestClusterHarnessRecorder(t *testing.T) {
	c := harnessOnly(t, 1)
	ctx := testCtx(t, 30*time.Second)
	const id = "00112233445566778899aabbccddeeff"
	put := func(key, value string, opts ...clientv3.OpOption) {
		t.Helper()
		if _, err := c.cli.Put(ctx, c.key(key), value, opts...); err != nil {
			t.Fatal(err)
		}
	}
	lease, err := c.cli.Grant(ctx, 30)
	if err != nil {
		t.Fatal(err)
	}
	put("topics/events", `{"name":"events","id":"`+id+`","partitions":1}`)
	own := "own/parts/" + id + "/0000000000"
	index := func(base int64, node int) {
		put(fmt.Sprintf("index/%s/0000000000/%020d", id, base),
			fmt.Sprintf(`{"object":"data/1700000000000-%d-0a0b.obj","base_offset":%d,"end_offset":%d}`, node, base, base+10))
	}
	put(own, `{"node_id":1,"epoch":1}`, clientv3.WithLease(lease.ID))
	index(0, 1)
	if _, err := c.cli.Revoke(ctx, lease.ID); err != nil { // the lease expires: the key goes
		t.Fatal(err)
	}
	put(own, `{"node_id":2,"epoch":2}`)
	index(10, 2)
	index(20, 1) // node 1 as a zombie: what the fence forbids
	put("index/"+id+"/0000000000/00000000000000000030", `{"object":"compacted/x.obj","base_offset":30,"end_offset":40}`)
	c.rec.sync()

	if n := len(c.hist.OwnerChanges()); n != 3 {
		t.Errorf("%d owner changes recorded, want 3 (put, expiry, put): %+v", n, c.hist.OwnerChanges())
	}
	if n := len(c.hist.Commits()); n != 3 {
		t.Errorf("%d commits recorded, want 3 (compacted objects name no writer): %+v", n, c.hist.Commits())
	}
	r := c.hist.Check(nil)
	fence := r.Of(history.RuleFence)
	if len(fence) != 1 || len(r.Violations) != 1 || !strings.Contains(fence[0].Message, "node 1 committed offsets [20,30)") {
		t.Fatalf("want one fence violation, node 1's commit at 20; got %v", r.Violations)
	}
	s, err := c.sampleOwners(ctx, c.rec.topicNames())
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Owners[history.Partition{Topic: "events", Partition: 0}]; got != 2 {
		t.Errorf("sample: events/0 owned by %d, want 2", got)
	}
}

// TestClusterHarnessWorkload: the harness's producer, consumer and final
// read, and the checker over their history, on one broker process of
// today's single-node engine on etcd and MinIO (object durability) that is
// killed with SIGKILL in the middle and started again. Every ack comes
// back once at its offset; the history is clean.
func TestClusterHarnessWorkload(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	srv := miniotest.Shared(t)
	dir, addr := t.TempDir(), fmt.Sprintf("127.0.0.1:%d", freePort(t))
	flags := []string{"--metadata", "etcd://" + endpoint + "/workload", "--durability", "object",
		"--object-store", srv.S3URL(srv.NewBucket(t), "sediment"), "--upload-interval", "100ms"}
	env := append([]string{"SEDIMENT_TEST_BROKER=1"}, srv.Env()...)
	p := startBinary(t, os.Args[0], dir, addr, env, nil, flags...)
	const topic = "workload"
	createTopics(t, addr, topic, 4)
	hist := history.New()
	prod := startHistoryProducer(t, []string{addr}, topic, hist, 1000)
	stopConsumer := startHistoryConsumer(t, []string{addr}, topic, hist)
	waitAcked(t, hist, 500, 30*time.Second)
	p.kill()
	startBinary(t, os.Args[0], dir, addr, env, nil, flags...)
	waitAcked(t, hist, 500, 30*time.Second)
	prod.stop()
	stopConsumer()
	r := hist.Check(readFinal(t, []string{addr}, topic))
	t.Logf("history: %d acked, %d failed, %d records, %d reads", r.Acked, r.Failed, r.Records, r.Reads)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if r.Reads == 0 {
		t.Error("the consumer read nothing")
	}
}
