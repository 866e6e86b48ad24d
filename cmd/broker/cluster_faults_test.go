package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/internal/testwait"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

// TestClusterBadStart (issue 18, bad input): a second broker started with
// the --node-id of a live one refuses to start and says why, naming
// --node-id, while the first goes on; a file:// bucket with --metadata
// etcd is refused by the process with a message saying it is not shared.
func TestClusterBadStart(t *testing.T) {
	c := startCluster(t, clusterOpts{Brokers: 1})
	dup := c.launch(&clusterNode{id: 1, rack: "r9", dir: t.TempDir(), addr: fmt.Sprintf("127.0.0.1:%d", freePort(t))})
	select {
	case err := <-dup.exited:
		dup.exited <- err
		if err == nil {
			t.Errorf("the second broker with --node-id 1 exited with status 0")
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the second broker with --node-id 1 still runs after 60s\n%s", dup.logs.String())
	}
	if logs := dup.logs.String(); !strings.Contains(logs, "--node-id 1 is taken by a live broker at "+c.node(1).addr) {
		t.Errorf("the second broker with --node-id 1 does not say the id is taken, and by whom:\n%s", logs)
	}
	createTopics(t, c.addrs(1)[0], "still", 2) // the first one serves on
	c.waitOwned("still", 2, func(node int32) bool { return node == 1 })

	dir := t.TempDir()
	_, stderr, code := brokerCLI(t, nil, "serve", "--listen", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "--http-listen", "",
		"--data-dir", dir, "--metadata", c.metadataURL(), "--node-id", "2", "--object-store", "file://"+dir+"/bucket")
	if code == 0 || !strings.Contains(stderr, "--object-store file://") || !strings.Contains(stderr, "not shared") || !strings.Contains(stderr, "--shared-local-store") {
		t.Errorf("a file:// bucket with --metadata etcd: exit %d, want a refusal saying the folder is not shared and naming --shared-local-store:\n%s", code, stderr)
	}
}

// TestClusterEtcdOutage (issue 18, bad input): etcd stops for longer than
// the broker's session. The broker answers /readyz 503 and acknowledges no
// produce, in wal durability too, where an ack needs only the WAL: past
// its local lease deadline it stops. etcd comes back on the same ports and
// the broker, untouched, is ready again, acknowledges produce, and holds
// every record it acknowledged before, once.
func TestClusterEtcdOutage(t *testing.T) {
	for _, durability := range []string{"object", "wal"} {
		t.Run(durability, func(t *testing.T) { testEtcdOutage(t, durability) })
	}
}

func testEtcdOutage(t *testing.T, durability string) {
	etcd := etcdtest.StartMember(t)
	p := startProc(t, t.TempDir(), "", nil, "--metadata", "etcd://"+etcd.Endpoint()+"/outage", "--node-id", "1",
		"--session-timeout", "2s", "--durability", durability, "--shared-local-store")
	const topic, partitions = "outage", 2
	createTopics(t, p.addr, topic, partitions)
	acked := produceAckedTo(t, []string{p.addr}, topic, "before", 200, partitions)

	etcd.Stop()
	waitReadyz(t, p, http.StatusServiceUnavailable, 30*time.Second)
	cl := newClusterClient(t, []string{p.addr}, kgo.DefaultProduceTopic(topic), kgo.RecordDeliveryTimeout(5*time.Second))
	err := cl.ProduceSync(testCtx(t, 30*time.Second), &kgo.Record{Value: []byte("during")}).FirstErr()
	cl.Close()
	if err == nil {
		t.Errorf("a produce was acknowledged while etcd was down past the session")
	}

	etcd.Restart(t)
	waitReadyz(t, p, http.StatusOK, 60*time.Second)
	acked = append(acked, produceAckedTo(t, []string{p.addr}, topic, "after", 200, partitions)...)
	checkAcked(t, readFinal(t, []string{p.addr}, topic), acked, nil)
}

// waitReadyz waits until the broker's /readyz answers status.
func waitReadyz(t *testing.T, p *brokerProc, status int, d time.Duration) {
	t.Helper()
	last := 0
	testwait.Until(t, d, func() bool {
		if resp, err := http.Get("http://" + p.http + "/readyz"); err == nil {
			resp.Body.Close()
			last = resp.StatusCode
		}
		return last == status
	}, "/readyz answers %v, not %d, after %v\n%v", testwait.Later(func() string { return fmt.Sprint(last) }),
		status, d, testwait.Later(p.logs.String))
}
