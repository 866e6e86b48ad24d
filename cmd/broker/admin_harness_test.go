package main

// Helpers of the operator CLI tests (admin_*_test.go): the Kafka
// implementations the command suite runs against (a real Sediment broker
// and franz-go's kfake), running a command in-process, and golden files
// with the values that differ from run to run normalised.

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/cmd/broker/admin"
)

var updateGolden = flag.Bool("update", false, "rewrite the admin CLI golden files in admin/testdata from the Sediment run")

// adminCluster is one Kafka implementation under the admin suite.
type adminCluster struct {
	name string
	addr string
	// tokens are exact strings replaced before a golden comparison:
	// member ids, the broker's address.
	tokens map[string]string
}

// adminClusters starts a Sediment broker and a one-broker kfake cluster.
// Sediment comes first: with -update its output writes the golden files
// and kfake is compared against them.
func adminClusters(t *testing.T) []*adminCluster {
	t.Helper()
	tb := startTestBroker(t, "")
	setBrokerConfigs(t, tb.addr, quickGroups...)
	fake, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	t.Cleanup(fake.Close)
	var out []*adminCluster
	for _, c := range []struct{ name, addr string }{{"sediment", tb.addr}, {"kfake", fake.ListenAddrs()[0]}} {
		out = append(out, &adminCluster{name: c.name, addr: c.addr, tokens: map[string]string{c.addr: "<broker>"}})
	}
	return out
}

// cliResult is what one command printed and its exit code.
type cliResult struct {
	args           []string
	stdout, stderr string
	code           int
}

// cli runs `broker ARGS` in-process against the cluster (through
// SEDIMENT_BOOTSTRAP, so the arguments stay as an operator types them).
func (c *adminCluster) cli(t *testing.T, args ...string) cliResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := func(k string) string {
		if k == "SEDIMENT_BOOTSTRAP" {
			return c.addr
		}
		return ""
	}
	code := admin.Run(args, &stdout, &stderr, env)
	return cliResult{args: args, stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// must runs a command that has to succeed and returns its stdout.
func (c *adminCluster) must(t *testing.T, args ...string) string {
	t.Helper()
	r := c.cli(t, args...)
	if r.code != 0 {
		t.Fatalf("broker %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// transcript is the golden form of a result: the command, what it printed
// on each stream and its exit code.
func (r cliResult) transcript() string {
	var b strings.Builder
	fmt.Fprintf(&b, "$ broker %s\n%s", strings.Join(r.args, " "), r.stdout)
	if r.stderr != "" {
		fmt.Fprintf(&b, "--- stderr\n%s", r.stderr)
	}
	fmt.Fprintf(&b, "--- exit %d\n", r.code)
	return b.String()
}

// clientHost matches the client address in DescribeGroups: Kafka and
// Sediment answer "/IP", kfake "IP:PORT".
var clientHost = regexp.MustCompile(`/?127\.0\.0\.1(:\d+)?`)

// brokerPort matches the coordinator's port in JSON.
var brokerPort = regexp.MustCompile(`"port": \d+`)

// normalise replaces what differs between runs and implementations: the
// cluster's address and port, member ids, client hosts. Table output is
// re-aligned afterwards, so the golden file shows aligned columns.
func (c *adminCluster) normalise(s string, table bool) string {
	for from, to := range c.tokens {
		s = strings.ReplaceAll(s, from, to)
	}
	s = clientHost.ReplaceAllString(s, "<host>")
	s = brokerPort.ReplaceAllString(s, `"port": "<port>"`)
	if table {
		s = realign(s)
	}
	return s
}

// cellGap is the space between table columns (the CLI pads with two).
var cellGap = regexp.MustCompile(` {2,}`)

// realign re-pads columns after normalisation changed cell widths; text
// without double spaces is left as it is.
func realign(s string) string {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	for _, line := range strings.SplitAfter(s, "\n") {
		fmt.Fprint(tw, cellGap.ReplaceAllString(strings.TrimRight(line, " "), "\t"))
	}
	tw.Flush()
	return b.String()
}

// golden compares the normalised transcript of r with testdata/NAME.golden
// (rewriting it with -update on the Sediment run).
func (c *adminCluster) golden(t *testing.T, name string, r cliResult) {
	t.Helper()
	table := !strings.Contains(strings.Join(r.args, " "), "--output json")
	got := c.normalise(r.transcript(), table)
	path := filepath.Join("admin", "testdata", name+".golden")
	if *updateGolden && c.name == "sediment" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/broker -run TestAdmin -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s: %s output differs from %s\n--- got:\n%s--- want:\n%s", c.name, name, path, got, want)
	}
}

// runGolden runs a command and compares it with its golden file.
func (c *adminCluster) runGolden(t *testing.T, name string, args ...string) cliResult {
	t.Helper()
	r := c.cli(t, args...)
	c.golden(t, name, r)
	return r
}

// kadmFor returns an admin client of the test's own, to check what the CLI
// did through the plain Kafka API.
func kadmFor(t *testing.T, addr string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// committed returns a group's committed offsets, topic/partition -> offset,
// through OffsetFetch.
func committed(t *testing.T, adm *kadm.Client, group string) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resps, err := adm.FetchOffsets(ctx, group)
	if err == nil {
		err = resps.Error()
	}
	if err != nil {
		t.Fatalf("fetch offsets of %s: %v", group, err)
	}
	out := map[string]int64{}
	resps.Each(func(r kadm.OffsetResponse) {
		if r.At >= 0 {
			out[r.Topic+"/"+strconv.Itoa(int(r.Partition))] = r.At
		}
	})
	return out
}

// produceTo writes n records to one partition, each with timestamp ts (the
// current time when zero), in one batch.
func produceTo(t *testing.T, addr, topic string, partition int32, n int, ts time.Time) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for i := 0; i < n; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: partition, Value: []byte(strconv.Itoa(i)), Timestamp: ts})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce to %s/%d: %v", topic, partition, err)
	}
}

// consumeAndCommit runs a group member on topics that reads until it has
// want records, commits them and leaves, so the group is Empty with those
// commits. It returns the member id (franz-go puts it in the commit
// metadata).
func consumeAndCommit(t *testing.T, addr, group string, want int, topics ...string) string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topics...),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for got := 0; got < want; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("group %s: %d of %d records before the deadline", group, got, want)
		}
		got += fs.NumRecords()
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("group %s: commit: %v", group, err)
	}
	member, _ := cl.GroupMetadata()
	return member
}

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }
