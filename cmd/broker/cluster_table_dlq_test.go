package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	icebergcatalog "github.com/apache/iceberg-go/catalog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/table/catalog"
)

// TestClusterTableDeadLettersAndStatus: three brokers convert a table
// topic whose dead-letter topic has three partitions, one on each broker,
// so two of them are owned by brokers that do not hold the table slot.
// Every bad record is in <topic>.dlq once, in the partition of its source
// partition, the good ones are in the table once; each broker, asked
// directly, and the CLI against each broker answer the same table status,
// naming the slot holder as the converter; `broker cluster describe`
// shows it too. A table topic without a dead-letter topic gets one.
func TestClusterTableDeadLettersAndStatus(t *testing.T) {
	c, cat := startTableCluster(t, 3)
	createTopics(t, c.addrs(1)[0], "events.dlq", 3)
	var dlqOwners map[int32]owned
	c.waitFor(30*time.Second, "events.dlq placed on three brokers", func(ctx context.Context) (bool, string) {
		owners, _, err := c.owners(ctx, "events.dlq")
		if err != nil {
			return false, err.Error()
		}
		dlqOwners = owners
		seen := map[int32]bool{}
		for _, o := range owners {
			seen[o.Node] = true
		}
		return len(owners) == 3 && len(seen) == 3, fmt.Sprintf("owners %v", owners)
	})
	createTableTopic(t, c.addrs(1)[0], "events", 3, nil)
	holder := c.tableHolder()
	values, bad := badEvery(30, 5)
	recs := produceValues(t, c.addrs(1)[0], "events", 3, values)
	checkGoodOnce(t, waitTableRows(t, cat, "events", len(values)-len(bad)), values, bad)
	dlq := waitDeadLetters(t, c, "events", len(bad))
	checkClusterDeadLetters(t, dlq, 3, recs, bad, true)
	for p, o := range dlqOwners {
		if o.Node != holder && len(dlq[p]) == 0 {
			t.Errorf("events.dlq partition %d, owned by node %d (the table slot is on node %d), holds no dead letter", p, o.Node, holder)
		}
	}
	if now, _, err := c.owners(testCtx(t, 10*time.Second), "events.dlq"); err != nil || fmt.Sprint(now) != fmt.Sprint(dlqOwners) {
		t.Fatalf("events.dlq owners moved during the test (%v, was %v): %v", now, dlqOwners, err)
	}
	want := map[string]string{"converter": strconv.Itoa(int(holder)), "dlq": strconv.Itoa(len(bad)),
		"rows": strconv.Itoa(len(values) - len(bad)), "lag": "0", "state": "running"}
	checkStatusEverywhere(t, c, c.ids(), "events", want)
	checkDescribeShowsConverter(t, c, "events", holder)

	// Without a dead-letter topic the converter creates one, of one
	// partition, wherever the controller places it.
	createTableTopic(t, c.addrs(2)[0], "clicks", 2, nil)
	values, bad = badEvery(12, 3)
	recs = produceValues(t, c.addrs(2)[0], "clicks", 2, values)
	checkGoodOnce(t, waitTableRows(t, cat, "clicks", len(values)-len(bad)), values, bad)
	checkClusterDeadLetters(t, readTopic(t, c.addrs(2)[0], "clicks.dlq"), 1, recs, bad, true)
}

// TestClusterTableDeadLetterOwnerKilled (fault): the broker owning the
// dead-letter partition a table converter is appending to is killed while
// it appends. The partition moves to a live broker, the converter's
// appends reach it there, and every bad record is in <topic>.dlq exactly
// once: the producer's retries of appends whose answer was lost are
// deduplicated by the new owner. Every good record is in the table once.
func TestClusterTableDeadLetterOwnerKilled(t *testing.T) {
	c, cat := startTableCluster(t, 3)
	createTopics(t, c.addrs(1)[0], "events.dlq", 3)
	createTableTopic(t, c.addrs(1)[0], "events", 3, nil)
	holder := c.tableHolder()
	var victim, part int32 = -1, -1
	c.waitFor(30*time.Second, "an events.dlq partition owned by a broker that does not convert the table", func(ctx context.Context) (bool, string) {
		owners, _, err := c.owners(ctx, "events.dlq")
		if err != nil {
			return false, err.Error()
		}
		for p, o := range owners {
			if o.Node != holder {
				victim, part = o.Node, p
				return true, ""
			}
		}
		return false, fmt.Sprintf("owners %v, table slot on node %d", owners, holder)
	})
	values, bad := badEvery(80, 2) // 40 bad records, each appended alone and acknowledged after an upload
	recs := produceValuesTo(t, c.addrs(holder)[0], "events", part, values)
	var before int64
	c.waitFor(time.Minute, "the first dead letter", func(ctx context.Context) (bool, string) {
		n, err := endOffset(ctx, c, holder, "events.dlq", part)
		before = n
		return n > 0, fmt.Sprintf("end offset %d: %v", n, err)
	})
	c.kill(victim)
	t.Logf("node %d, owner of events.dlq partition %d, killed after %d of %d dead letters", victim, part, before, len(bad))
	checkGoodOnce(t, waitTableRows(t, cat, "events", len(values)-len(bad)), values, bad)
	dlq := waitDeadLettersFrom(t, c, holder, "events", len(bad))
	checkClusterDeadLetters(t, dlq, 3, recs, bad, true)
	if len(dlq[part]) != len(bad) {
		t.Fatalf("events.dlq partition %d holds %d dead letters, want %d", part, len(dlq[part]), len(bad))
	}
}

// TestClusterTableHolderKilledAfterDeadLetters (fault): the broker
// converting a table is killed after it appended dead letters to a
// partition another broker owns and before the table commit that moves
// past their records. The broker that takes the slot over converts from
// the table's offsets: every good record is in the table once, and every
// bad one is in <topic>.dlq at least once (those appended before the kill
// twice, as documented), none dropped. Then every live broker names the
// new converter in the table's status.
func TestClusterTableHolderKilledAfterDeadLetters(t *testing.T) {
	c, cat := startTableCluster(t, 3)
	createTopics(t, c.addrs(1)[0], "events.dlq", 3)
	createTableTopic(t, c.addrs(1)[0], "events", 3, nil)
	holder := c.tableHolder()
	var part int32 = -1
	c.waitFor(30*time.Second, "an events.dlq partition owned by a broker that does not convert the table", func(ctx context.Context) (bool, string) {
		owners, _, err := c.owners(ctx, "events.dlq")
		if err != nil {
			return false, err.Error()
		}
		for p, o := range owners {
			if o.Node != holder {
				part = p
				return true, ""
			}
		}
		return false, fmt.Sprintf("owners %v, table slot on node %d", owners, holder)
	})
	var live []int32
	for _, id := range c.ids() {
		if id != holder {
			live = append(live, id)
		}
	}
	values, bad := badEvery(80, 2)
	recs := produceValuesTo(t, c.addrs(live[0])[0], "events", part, values)
	var before int64
	c.waitFor(time.Minute, "the first dead letter", func(ctx context.Context) (bool, string) {
		n, err := endOffset(ctx, c, live[0], "events.dlq", part)
		before = n
		return n > 0, fmt.Sprintf("end offset %d: %v", n, err)
	})
	c.kill(holder)
	checkGoodOnce(t, waitTableRows(t, cat, "events", len(values)-len(bad)), values, bad)
	// The table moved past the last bad record: every dead letter is durable.
	dlq := readTopic(t, c.addrs(live[0])[0], "events.dlq")
	dups := checkClusterDeadLetters(t, dlq, 3, recs, bad, false)
	t.Logf("node %d killed after %d of %d dead letters; %d dead-lettered twice", holder, before, len(bad), dups)
	now := c.tableHolder()
	if now == holder {
		t.Fatalf("the table slot is still held by the killed node %d", holder)
	}
	checkStatusEverywhere(t, c, live, "events", map[string]string{"converter": strconv.Itoa(int(now)), "lag": "0", "state": "running"})
}

// startTableCluster starts brokers sharing a SQLite catalog file (every
// broker runs on this machine), and opens that catalog.
func startTableCluster(t *testing.T, brokers int) (*testCluster, icebergcatalog.Catalog) {
	t.Helper()
	catURL := "sqlite://" + filepath.Join(t.TempDir(), "catalog.db")
	c := startCluster(t, clusterOpts{Brokers: brokers, Flags: []string{"--table-catalog", catURL, "--shared-local-store"}})
	for k, v := range envMap(c.minio.Env()) {
		t.Setenv(k, v)
	}
	cat, err := catalog.Open(testCtx(t, 30*time.Second), catURL, catalog.Options{ObjectStoreURL: c.store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cl, ok := cat.(io.Closer); ok {
			cl.Close()
		}
	})
	return c, cat
}

// badEvery returns n values numbered 0..n-1, every k-th (from 0) not JSON,
// and the indexes of those.
func badEvery(n, k int) ([]string, map[int]bool) {
	values, bad := numbered(0, n), map[int]bool{}
	for i := 0; i < n; i += k {
		values[i], bad[i] = fmt.Sprintf("not json %d", i), true
	}
	return values, bad
}

// produceValuesTo produces every value to one partition and waits for the
// acknowledgements.
func produceValuesTo(t *testing.T, addr, topic string, part int32, values []string) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, len(values))
	for i, v := range values {
		recs[i] = &kgo.Record{Topic: topic, Partition: part, Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(v)}
	}
	if err := cl.ProduceSync(testCtx(t, time.Minute), recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	return recs
}

// checkGoodOnce fails unless rows are the good values, each once.
func checkGoodOnce(t *testing.T, rows []tableRow, values []string, bad map[int]bool) {
	t.Helper()
	seen := map[int]bool{}
	for _, r := range rows {
		v, ok := r["n"].(float64)
		n := int(v)
		if !ok || n < 0 || n >= len(values) || bad[n] || seen[n] {
			t.Fatalf("table row %v: not a good record, or one seen before", r)
		}
		seen[n] = true
	}
	if len(seen) != len(values)-len(bad) {
		t.Fatalf("%d good records in the table, want %d", len(seen), len(values)-len(bad))
	}
}

// waitDeadLetters reads <topic>.dlq through node 1 until it holds n
// records, and returns them by partition.
func waitDeadLetters(t *testing.T, c *testCluster, topic string, n int) map[int32][]*kgo.Record {
	t.Helper()
	return waitDeadLettersFrom(t, c, 1, topic, n)
}

func waitDeadLettersFrom(t *testing.T, c *testCluster, node int32, topic string, n int) map[int32][]*kgo.Record {
	t.Helper()
	c.waitFor(time.Minute, fmt.Sprintf("%d dead letters", n), func(ctx context.Context) (bool, string) {
		var sum int64
		for p := range int32(3) {
			end, err := endOffset(ctx, c, node, topic+".dlq", p)
			if err != nil {
				return false, err.Error()
			}
			sum += end
		}
		return sum >= int64(n), fmt.Sprintf("%d dead letters", sum)
	})
	return readTopic(t, c.addrs(node)[0], topic+".dlq")
}

// endOffset is the end offset of one partition, asked through node.
func endOffset(ctx context.Context, c *testCluster, node int32, topic string, part int32) (int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs(node)...))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	o, ok := ends.Lookup(topic, part)
	if !ok || o.Err != nil {
		return 0, fmt.Errorf("end offset of %s/%d: %v", topic, part, o.Err)
	}
	return o.Offset, nil
}

// checkClusterDeadLetters fails unless the dead letters are the bad
// records, each in the dead-letter partition of its source partition
// (source partition modulo the dead-letter partitions), each once or,
// unless once, at least once. It returns how many are there more than
// once.
func checkClusterDeadLetters(t *testing.T, dlq map[int32][]*kgo.Record, dlqParts int32, recs []*kgo.Record, bad map[int]bool, once bool) int {
	t.Helper()
	src := map[string]int{}
	for i := range bad {
		src[fmt.Sprintf("%d/%d", recs[i].Partition, recs[i].Offset)] = i
	}
	seen, dups := map[int]bool{}, 0
	for p, rs := range dlq {
		for _, d := range rs {
			h := map[string]string{}
			for _, x := range d.Headers {
				h[x.Key] = string(x.Value)
			}
			i, ok := src[h["sediment.table.source.partition"]+"/"+h["sediment.table.source.offset"]]
			if !ok || (once && seen[i]) || string(d.Value) != string(recs[i].Value) || recs[i].Partition%dlqParts != p {
				t.Fatalf("dead letter %s/%d (headers %v, value %q): no bad record's, or a second one", d.Topic, d.Offset, h, d.Value)
			}
			if seen[i] {
				dups++
			}
			seen[i] = true
		}
	}
	if len(seen) != len(bad) {
		t.Fatalf("%d bad records dead-lettered, want %d", len(seen), len(bad))
	}
	return dups
}

// checkStatusEverywhere waits until every broker of ids, asked directly,
// answers topic's table status with want (names without the
// sediment.table.status. prefix) and every broker the same, last commit
// included; then the CLI against each broker prints that status.
func checkStatusEverywhere(t *testing.T, c *testCluster, ids []int32, topic string, want map[string]string) {
	t.Helper()
	var first map[string]string
	c.waitFor(time.Minute, "the same table status from every broker", func(ctx context.Context) (bool, string) {
		first = nil
		for _, id := range ids {
			got, err := tableStatusFrom(ctx, c, id, topic)
			if err != nil {
				return false, err.Error()
			}
			for k, v := range want {
				if got[k] != v {
					return false, fmt.Sprintf("node %d: %s=%q, want %q (%v)", id, k, got[k], v, got)
				}
			}
			if first != nil && fmt.Sprint(got) != fmt.Sprint(first) {
				return false, fmt.Sprintf("node %d answers %v, another %v", id, got, first)
			}
			first = got
		}
		return true, ""
	})
	for _, id := range ids {
		ac := &adminCluster{name: "sediment", addr: c.addrs(id)[0], tokens: map[string]string{}}
		var d []struct {
			TableStatus map[string]string `json:"table_status"`
		}
		out := ac.must(t, "topics", "describe", "--topic", topic, "--output", "json")
		if err := json.Unmarshal([]byte(out), &d); err != nil || len(d) != 1 {
			t.Fatalf("topics describe against node %d: %v\n%s", id, err, out)
		}
		if fmt.Sprint(d[0].TableStatus) != fmt.Sprint(first) {
			t.Errorf("topics describe against node %d: table status %v, want %v", id, d[0].TableStatus, first)
		}
	}
}

// tableStatusFrom sends DescribeConfigs for topic to broker id itself and
// returns its sediment.table.status.* entries, without the prefix.
func tableStatusFrom(ctx context.Context, c *testCluster, id int32, topic string) (map[string]string, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs(id)...))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	req := kmsg.NewPtrDescribeConfigsRequest()
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl.Broker(int(id)))
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", id, err)
	}
	out := map[string]string{}
	for _, r := range resp.Resources {
		for _, e := range r.Configs {
			if name, ok := strings.CutPrefix(e.Name, "sediment.table.status."); ok && e.Value != nil {
				out[name] = *e.Value
			}
		}
	}
	return out, nil
}

// checkDescribeShowsConverter runs `broker cluster describe` and looks for
// topic's line naming node as its converter.
func checkDescribeShowsConverter(t *testing.T, c *testCluster, topic string, node int32) {
	t.Helper()
	stdout, stderr, code := brokerCLI(t, nil, "cluster", "describe", "--metadata", c.metadataURL())
	if code != 0 {
		t.Fatalf("cluster describe: exit %d\n%s", code, stderr)
	}
	re := regexp.MustCompile(fmt.Sprintf(`(?m)^%s\s+\d+\s+%d$`, regexp.QuoteMeta(topic), node))
	if !re.MatchString(stdout) {
		t.Fatalf("cluster describe names no converter %d for %s:\n%s", node, topic, stdout)
	}
}
