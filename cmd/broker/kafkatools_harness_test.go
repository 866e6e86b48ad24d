//go:build interop

package main

// Helpers of the Kafka tools interop tests (kafkatools_*_test.go): running
// one of Kafka's command-line tools from its main class, reading what it
// prints, and reading the same state from the broker's own CLI (`broker
// topics|groups|offsets --output json`) to compare the facts.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sediment-io/sediment/interop/jvm"
)

// The main classes bin/kafka-*.sh run.
const (
	kafkaTopics         = "org.apache.kafka.tools.TopicCommand"
	kafkaConsumerGroups = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
	kafkaConfigs        = "org.apache.kafka.tools.ConfigCommand"
	kafkaGetOffsets     = "org.apache.kafka.tools.GetOffsetShell"
	kafkaDeleteRecords  = "org.apache.kafka.tools.DeleteRecordsCommand"
	kafkaTransactions   = "org.apache.kafka.tools.TransactionsCommand"
)

// toolsVsEnv set to "kafka" runs the tool tests against a reference
// Apache Kafka broker instead of Sediment, to check that what they expect
// is Kafka's behaviour. The few places where the two differ say so.
const toolsVsEnv = "SEDIMENT_INTEROP_TOOLS_VS"

// onKafka says whether the tool tests run against Apache Kafka.
func onKafka() bool { return os.Getenv(toolsVsEnv) == "kafka" }

// toolsCluster starts the broker the tool tests run against, with group
// rebalances that start without delay.
func toolsCluster(t *testing.T) string {
	t.Helper()
	if onKafka() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		props := map[string]string{"group.initial.rebalance.delay.ms": "0"}
		k, err := jvm.StartKafka(ctx, javaClasspath(t), jvm.KafkaOptions{Dir: t.TempDir(), Props: props})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { k.Close() })
		return k.Addr
	}
	tb := startTestBroker(t, "")
	setBrokerConfigs(t, tb.addr, quickGroups...)
	return tb.addr
}

// toolRun is what one tool run printed and its exit code.
type toolRun struct {
	stdout, stderr string
	code           int
}

// output is both streams: the tools print some errors on stdout and some
// on stderr.
func (r toolRun) output() string { return r.stdout + r.stderr }

// kafkaTool runs class against the cluster at addr with args after
// --bootstrap-server, bounded by two minutes. Any exit code is returned;
// a tool that cannot be started or overruns fails the test.
func kafkaTool(t *testing.T, addr, class string, args ...string) toolRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	argv := append([]string{"--bootstrap-server", addr}, args...)
	cmd := jvm.Command(ctx, javaClasspath(t), nil, class, argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if ctx.Err() != nil || (err != nil && !errors.As(err, &exit)) {
		t.Fatalf("%s %s: %v (%v)\nstderr:\n%s", class, strings.Join(args, " "), err, ctx.Err(), stderr.String())
	}
	r := toolRun{stdout: stdout.String(), stderr: stderr.String()}
	if exit != nil {
		r.code = exit.ExitCode()
	}
	return r
}

// mustKafkaTool runs a tool that has to succeed and returns its stdout.
func mustKafkaTool(t *testing.T, addr, class string, args ...string) string {
	t.Helper()
	r := kafkaTool(t, addr, class, args...)
	if r.code != 0 {
		t.Fatalf("%s %s: exit %d\nstdout:\n%s\nstderr:\n%s", class, strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// brokerJSON runs `broker ARGS --output json` in-process against addr and
// decodes what it printed into v.
func brokerJSON(t *testing.T, addr string, v any, args ...string) {
	t.Helper()
	c := &adminCluster{name: "sediment", addr: addr}
	out := c.must(t, append(args, "--output", "json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("broker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// headerCell is a column title of the tools' tables: GROUP, LOG-END-OFFSET,
// #PARTITIONS, (ID).
var headerCell = regexp.MustCompile(`^[A-Z#(][A-Z0-9#()_-]*$`)

// parseToolTable reads the whitespace-aligned tables of
// kafka-consumer-groups into rows keyed by column title. A line whose
// every cell is a title starts a table; the last column takes the rest of
// a line (a status that is an error message has spaces in it). The
// COORDINATOR (ID) title and its "host:port (id)" value are both two cells,
// so they stay aligned.
func parseToolTable(s string) []map[string]string {
	var header []string
	var rows []map[string]string
	for _, line := range strings.Split(s, "\n") {
		cells := strings.Fields(line)
		switch {
		case len(cells) == 0:
			header = nil
		case allTitles(cells):
			header = cells
		case header != nil && len(cells) >= len(header):
			row := map[string]string{}
			for i, h := range header {
				row[h] = cells[i]
			}
			row[header[len(header)-1]] = strings.Join(cells[len(header)-1:], " ")
			rows = append(rows, row)
		}
	}
	return rows
}

func allTitles(cells []string) bool {
	for _, c := range cells {
		if !headerCell.MatchString(c) {
			return false
		}
	}
	return true
}

// toolTopic is what `kafka-topics --describe` prints for one topic.
type toolTopic struct {
	partitionCount, replicationFactor int
	configs                           map[string]string
	partitions                        []map[string]string // Partition, Leader, Replicas, Isr
}

// parseTopicDescribe reads `kafka-topics --describe`: a tab-separated
// "Key: value" line per topic, then one per partition.
func parseTopicDescribe(t *testing.T, s string) map[string]*toolTopic {
	t.Helper()
	out := map[string]*toolTopic{}
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		fields := map[string]string{}
		for _, f := range strings.Split(strings.TrimSpace(line), "\t") {
			k, v, _ := strings.Cut(f, ":")
			fields[k] = strings.TrimSpace(v)
		}
		name := fields["Topic"]
		if _, ok := fields["Partition"]; ok {
			if out[name] == nil {
				t.Fatalf("kafka-topics --describe: partition line before its topic: %q", line)
			}
			out[name].partitions = append(out[name].partitions, fields)
			continue
		}
		tp := &toolTopic{configs: map[string]string{}}
		tp.partitionCount, _ = strconv.Atoi(fields["PartitionCount"])
		tp.replicationFactor, _ = strconv.Atoi(fields["ReplicationFactor"])
		for _, kv := range strings.Split(fields["Configs"], ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				tp.configs[k] = v
			}
		}
		out[name] = tp
	}
	return out
}

// parseOffsetLines reads kafka-get-offsets: "topic:partition:offset" lines
// into "topic/partition" -> offset.
func parseOffsetLines(t *testing.T, s string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, line := range strings.Fields(s) {
		i := strings.LastIndexByte(line, ':')
		j := strings.LastIndexByte(line[:max(i, 0)], ':')
		off, err := strconv.ParseInt(line[i+1:], 10, 64)
		if j < 0 || err != nil {
			t.Fatalf("kafka-get-offsets: unexpected line %q", line)
		}
		out[line[:j]+"/"+line[j+1:i]] = off
	}
	return out
}

// parseConfigLines reads kafka-configs --describe: "  name=value
// sensitive=... synonyms={...}" lines into name -> value.
func parseConfigLines(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, "  ") {
			continue
		}
		entry, _, _ := strings.Cut(strings.TrimSpace(line), " sensitive=")
		if k, v, ok := strings.Cut(entry, "="); ok {
			out[k] = v
		}
	}
	return out
}

// cliTopic is `broker topics describe --output json` for one topic.
type cliTopic struct {
	Topic             string            `json:"topic"`
	ReplicationFactor int               `json:"replication_factor"`
	Configs           map[string]string `json:"configs"`
	Partitions        []struct {
		Partition      int32   `json:"partition"`
		Leader         int32   `json:"leader"`
		Replicas       []int32 `json:"replicas"`
		ISR            []int32 `json:"isr"`
		LogStartOffset *int64  `json:"log_start_offset"`
		LogEndOffset   *int64  `json:"log_end_offset"`
	} `json:"partitions"`
}

// describeTopicCLI returns `broker topics describe --topic NAME`.
func describeTopicCLI(t *testing.T, addr, topic string) cliTopic {
	t.Helper()
	var out []cliTopic
	brokerJSON(t, addr, &out, "topics", "describe", "--topic", topic)
	if len(out) != 1 {
		t.Fatalf("broker topics describe --topic %s: %d topics", topic, len(out))
	}
	return out[0]
}

// logOffsetsCLI returns "topic/partition" -> log start and log end offset
// of a topic as `broker topics describe` prints them.
func logOffsetsCLI(t *testing.T, addr, topic string) (start, end map[string]int64) {
	t.Helper()
	start, end = map[string]int64{}, map[string]int64{}
	for _, p := range describeTopicCLI(t, addr, topic).Partitions {
		key := topic + "/" + strconv.Itoa(int(p.Partition))
		if p.LogStartOffset == nil || p.LogEndOffset == nil {
			t.Fatalf("broker topics describe: %s has no log offsets", key)
		}
		start[key], end[key] = *p.LogStartOffset, *p.LogEndOffset
	}
	return start, end
}

// cliGroupOffset is one partition of `broker groups describe --output json`.
type cliGroupOffset struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	CurrentOffset *int64 `json:"current_offset"`
	LogEndOffset  *int64 `json:"log_end_offset"`
	Lag           *int64 `json:"lag"`
	ConsumerID    string `json:"consumer_id"`
	Host          string `json:"host"`
	ClientID      string `json:"client_id"`
}

// groupOffsetsCLI returns `broker groups describe --group G` by
// "topic/partition".
func groupOffsetsCLI(t *testing.T, addr, group string) map[string]cliGroupOffset {
	t.Helper()
	var out []struct {
		Offsets []cliGroupOffset `json:"offsets"`
	}
	brokerJSON(t, addr, &out, "groups", "describe", "--group", group)
	if len(out) != 1 {
		t.Fatalf("broker groups describe --group %s: %d groups", group, len(out))
	}
	m := map[string]cliGroupOffset{}
	for _, o := range out[0].Offsets {
		m[o.Topic+"/"+strconv.Itoa(int(o.Partition))] = o
	}
	return m
}

// resetPlanCLI returns the new offsets of a `broker groups reset-offsets`
// dry run by "topic/partition".
func resetPlanCLI(t *testing.T, addr string, args ...string) map[string]int64 {
	t.Helper()
	var plan []struct {
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
		NewOffset int64  `json:"new_offset"`
	}
	brokerJSON(t, addr, &plan, append([]string{"groups", "reset-offsets"}, args...)...)
	out := map[string]int64{}
	for _, p := range plan {
		out[p.Topic+"/"+strconv.Itoa(int(p.Partition))] = p.NewOffset
	}
	return out
}

// toolPlan reads the NEW-OFFSET table of kafka-consumer-groups
// --reset-offsets by "topic/partition".
func toolPlan(t *testing.T, s string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, row := range parseToolTable(s) {
		off, err := strconv.ParseInt(row["NEW-OFFSET"], 10, 64)
		if err != nil {
			t.Fatalf("kafka-consumer-groups --reset-offsets: bad row %v in\n%s", row, s)
		}
		out[row["TOPIC"]+"/"+row["PARTITION"]] = off
	}
	return out
}
