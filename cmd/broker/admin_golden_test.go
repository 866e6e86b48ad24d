package main

// Golden-output tests of the operator CLI (cmd/broker/admin): every read
// command in table and JSON (and CSV where an export is read back), run
// in-process against a real Sediment broker and against franz-go's kfake
// with the same expectations, with groups in known states made by
// franz-go consumers: "billing" is Empty with commits and a lag of 2 on
// orders/0, "audit" has one live member that has consumed and committed
// all of payments, "static" one live static member (group.instance.id
// static-1) that has done the same with orders.

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestAdminGolden(t *testing.T) {
	for _, c := range adminClusters(t) {
		t.Run(c.name, func(t *testing.T) { adminGoldenSuite(t, c) })
	}
}

func adminGoldenSuite(t *testing.T, c *adminCluster) {
	c.runGolden(t, "topics-create", "topics", "create", "--topic", "orders", "--partitions", "3", "--config", "retention.ms=86400000")
	c.must(t, "topics", "create", "--topic", "payments", "--partitions", "2")
	if r := c.cli(t, "topics", "create", "--topic", "orders"); r.code != 1 || !strings.Contains(r.stderr, "TOPIC_ALREADY_EXISTS") {
		t.Errorf("creating orders twice: exit %d, stderr %q; want 1 and TOPIC_ALREADY_EXISTS", r.code, r.stderr)
	}
	c.runGolden(t, "topics-create-if-not-exists", "topics", "create", "--topic", "orders", "--if-not-exists")
	makeGroups(t, c)

	for _, out := range []string{"table", "json"} {
		c.runGolden(t, "topics-list."+out, "topics", "list", "--output", out)
		c.runGolden(t, "topics-describe."+out, "topics", "describe", "--topic", "orders", "--topic", "payments", "--output", out)
		c.runGolden(t, "groups-list."+out, "groups", "list", "--output", out)
		c.runGolden(t, "groups-describe."+out, "groups", "describe", "--group", "audit", "--group", "billing", "--output", out)
		c.runGolden(t, "groups-describe-all."+out, "groups", "describe", "--all-groups", "--members", "--state", "--output", out)
		c.runGolden(t, "offsets-get."+out, "offsets", "get", "--group", "billing", "--output", out)
		c.runGolden(t, "reset-dry-run."+out, "groups", "reset-offsets", "--group", "billing", "--topic", "orders", "--to-earliest", "--output", out)
	}
	c.runGolden(t, "topics-describe.csv", "topics", "describe", "--output", "csv")
	// Defaults differ between implementations: no golden, but they are listed.
	all := c.must(t, "topics", "describe", "--topic", "orders", "--all-configs", "--output", "json")
	for _, want := range []string{`"retention.ms": "86400000"`, `"cleanup.policy": "delete"`} {
		if !strings.Contains(all, want) {
			t.Errorf("topics describe --all-configs lacks %s:\n%s", want, all)
		}
	}
	c.runGolden(t, "groups-list-state", "groups", "list", "--state", "empty")
	c.runGolden(t, "groups-describe-members.csv", "groups", "describe", "--all-groups", "--members", "--output", "csv")
	c.runGolden(t, "offsets-get.csv", "offsets", "get", "--group", "billing", "--topics", "orders", "--output", "csv")
	c.runGolden(t, "groups-describe-missing", "groups", "describe", "--group", "nobody")
	c.runGolden(t, "offsets-get-missing", "offsets", "get", "--group", "nobody", "--output", "json")

	dir := t.TempDir()
	c.tokens[dir] = "<dir>"
	export := writeFile(t, dir, "billing.json", c.must(t, "offsets", "get", "--group", "billing", "--output", "json"))
	c.runGolden(t, "offsets-commit", "offsets", "commit", "--group", "copy", "--input-json", export)
	c.runGolden(t, "groups-delete-offsets", "groups", "delete-offsets", "--group", "copy", "--topic", "orders:1")
	c.runGolden(t, "groups-delete", "groups", "delete", "--group", "copy")
	c.runGolden(t, "groups-delete-active", "groups", "delete", "--group", "audit")

	c.must(t, "topics", "create", "--topic", "scratch", "--partitions", "1")
	c.runGolden(t, "topics-alter-config", "topics", "alter-config", "--topic", "scratch", "--set", "retention.ms=3600000", "--partitions", "2")
	c.runGolden(t, "topics-describe-altered", "topics", "describe", "--topic", "scratch")
	c.runGolden(t, "topics-alter-config-delete", "topics", "alter-config", "--topic", "scratch", "--delete", "retention.ms")
	c.runGolden(t, "topics-delete", "topics", "delete", "--topic", "scratch")
	c.runGolden(t, "topics-delete-if-exists", "topics", "delete", "--topic", "scratch", "--if-exists")
	if r := c.cli(t, "topics", "delete", "--topic", "scratch"); r.code != 1 || !strings.Contains(r.stderr, "UNKNOWN_TOPIC_OR_PARTITION") {
		t.Errorf("deleting a deleted topic: exit %d, stderr %q; want 1 and UNKNOWN_TOPIC_OR_PARTITION", r.code, r.stderr)
	}
}

// makeGroups fills orders (5, 3 and 0 records) and payments (4 and 4),
// makes "billing" consume orders, commit and leave, then adds 2 records
// to orders/0; and starts "audit", a live member that consumed and
// committed all of payments, and "static", a live static member that did
// the same with orders.
func makeGroups(t *testing.T, c *adminCluster) {
	t.Helper()
	for _, p := range []struct {
		topic     string
		partition int32
		n         int
	}{{"orders", 0, 5}, {"orders", 1, 3}, {"payments", 0, 4}, {"payments", 1, 4}} {
		produceTo(t, c.addr, p.topic, p.partition, p.n, time.Time{})
	}
	c.tokens[consumeAndCommit(t, c.addr, "billing", 8, "orders")] = "<member:billing>"
	produceTo(t, c.addr, "orders", 0, 2, time.Time{})
	m := startActiveMember(t, c.addr, "audit", "payments", "audit-consumer", 8)
	c.tokens[m.id] = "<member:audit-consumer>"
	s := startActiveMember(t, c.addr, "static", "orders", "static-consumer", 10, kgo.InstanceID("static-1"))
	c.tokens[s.id] = "<member:static-1>"
}

// activeMember is a live group member started by startActiveMember.
type activeMember struct {
	id   string
	cl   *kgo.Client
	done chan struct{}
	once sync.Once
}

// startActiveMember starts a group member that reads want records of
// topic, commits them and keeps polling (an active member) until closed or
// the test ends.
func startActiveMember(t *testing.T, addr, group, topic, clientID string, want int, opts ...kgo.Opt) *activeMember {
	t.Helper()
	base := []kgo.Opt{kgo.SeedBrokers(addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ClientID(clientID),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200 * time.Millisecond),
		kgo.HeartbeatInterval(200 * time.Millisecond)}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	m := &activeMember{cl: cl, done: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for got := 0; got < want; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			cl.Close()
			t.Fatalf("group %s: %d of %d records before the deadline", group, got, want)
		}
		got += fs.NumRecords()
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		cl.Close()
		t.Fatalf("group %s: commit: %v", group, err)
	}
	go func() {
		defer close(m.done)
		for !cl.PollFetches(context.Background()).IsClientClosed() {
		}
	}()
	m.id, _ = cl.GroupMetadata()
	t.Cleanup(m.close)
	return m
}

// close leaves the group and stops polling; a second call does nothing.
func (m *activeMember) close() {
	m.once.Do(func() {
		m.cl.Close()
		<-m.done
	})
}
