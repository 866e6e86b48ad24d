//go:build interop

package main

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestInteropKafkaToolsGetOffsets: kafka-get-offsets at the latest (-1),
// earliest (-2) and max-timestamp (-3) times and by timestamp, before and
// after kafka-delete-records, compared with the log offsets `broker topics
// describe` prints.
func TestInteropKafkaToolsGetOffsets(t *testing.T) {
	addr := toolsCluster(t)
	const topic = "tools-log"
	createTopics(t, addr, topic, 3)
	// Partition 0: ten records a second apart but for record 7, an hour
	// later (the max timestamp); partition 1: five a second apart;
	// partition 2 stays empty.
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var ts []time.Time
	for i := range 10 {
		ts = append(ts, base.Add(time.Duration(i)*time.Second))
	}
	ts[7] = base.Add(time.Hour)
	produceAt(t, addr, topic, 0, ts...)
	produceSpread(t, addr, topic, 1, base, 5, time.Second)
	offsets := func(args ...string) map[string]int64 {
		t.Helper()
		return parseOffsetLines(t, mustKafkaTool(t, addr, kafkaGetOffsets, append([]string{"--topic", topic}, args...)...))
	}
	key := func(p int) string { return topic + "/" + strconv.Itoa(p) }

	start, end := logOffsetsCLI(t, addr, topic)
	checkOffsets(t, "--time -1", offsets("--time", "-1"), end, map[string]int64{key(0): 10, key(1): 5, key(2): 0})
	checkOffsets(t, "--time -2", offsets("--time", "-2"), start, map[string]int64{key(0): 0, key(1): 0, key(2): 0})
	checkOffsets(t, "--time -3", offsets("--time", "-3"), nil, map[string]int64{key(0): 7, key(1): 4})
	// The first record at or after the time; none in partition 1 (and
	// none in the empty one), which the tool leaves out.
	at := strconv.FormatInt(base.Add(4500*time.Millisecond).UnixMilli(), 10)
	checkOffsets(t, "--time "+at, offsets("--time", at), nil, map[string]int64{key(0): 5})
	checkOffsets(t, "--partitions 1,2", offsets("--partitions", "1,2"), nil, map[string]int64{key(1): 5, key(2): 0})

	// kafka-delete-records: -1 is the high watermark; an offset past the
	// log end is refused for its partition only.
	spec := `{"version":1,"partitions":[{"topic":"tools-log","partition":0,"offset":4},` +
		`{"topic":"tools-log","partition":1,"offset":-1},{"topic":"tools-log","partition":2,"offset":50}]}`
	file := filepath.Join(t.TempDir(), "delete.json")
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	out := mustKafkaTool(t, addr, kafkaDeleteRecords, "--offset-json-file", file)
	for _, want := range []string{
		"partition: tools-log-0\tlow_watermark: 4",
		"partition: tools-log-1\tlow_watermark: 5",
		"partition: tools-log-2\terror: org.apache.kafka.common.errors.OffsetOutOfRangeException",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("kafka-delete-records: no %q in\n%s", want, out)
		}
	}
	start, end = logOffsetsCLI(t, addr, topic)
	checkOffsets(t, "--time -2 after delete", offsets("--time", "-2"), start, map[string]int64{key(0): 4, key(1): 5, key(2): 0})
	checkOffsets(t, "--time -1 after delete", offsets("--time", "-1"), end, map[string]int64{key(0): 10, key(1): 5, key(2): 0})
	// Partition 1 has no records left: Sediment answers none. Apache Kafka
	// answers 4, below the log start, from the segment it has not deleted
	// yet (its answer depends on when segments are removed).
	maxAfter := map[string]int64{key(0): 7}
	if onKafka() {
		maxAfter[key(1)] = 4
	}
	checkOffsets(t, "--time -3 after delete", offsets("--time", "-3"), nil, maxAfter)
}

// checkOffsets compares kafka-get-offsets' answer with want and, when
// given, with what the broker's CLI says.
func checkOffsets(t *testing.T, what string, got, cli, want map[string]int64) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Errorf("kafka-get-offsets %s: %v, want %v", what, got, want)
	}
	if cli != nil && !maps.Equal(cli, want) {
		t.Errorf("broker topics describe for %s: %v, want %v", what, cli, want)
	}
}

// TestInteropKafkaToolsConfigs: kafka-configs describes and alters a
// topic's configs (compared with `broker topics describe`) and the
// brokers' (compared with DescribeConfigs through kadm), and a cluster
// default reaches the topics that do not override it.
func TestInteropKafkaToolsConfigs(t *testing.T) {
	addr := toolsCluster(t)
	const topic, plain = "tools-conf", "tools-plain"
	createTopics(t, addr, topic, 1)
	createTopics(t, addr, plain, 1)
	configs := func(args ...string) string { t.Helper(); return mustKafkaTool(t, addr, kafkaConfigs, args...) }
	onTopic := func(name string, args ...string) []string {
		return append([]string{"--entity-type", "topics", "--entity-name", name}, args...)
	}

	out := configs(onTopic(topic, "--alter", "--add-config", "retention.ms=7200000,max.message.bytes=2000000")...)
	if !strings.Contains(out, "Completed updating config for topic tools-conf.") {
		t.Errorf("kafka-configs --alter printed %q", out)
	}
	checkTopicConfigs(t, addr, topic, configs(onTopic(topic, "--describe")...), map[string]string{"retention.ms": "7200000", "max.message.bytes": "2000000"})
	all := parseConfigLines(configs(onTopic(topic, "--describe", "--all")...))
	for name, want := range map[string]string{"retention.ms": "7200000", "max.message.bytes": "2000000", "cleanup.policy": "delete", "message.timestamp.type": "CreateTime"} {
		if all[name] != want {
			t.Errorf("kafka-configs --describe --all: %s=%q, want %q", name, all[name], want)
		}
	}
	configs(onTopic(topic, "--alter", "--delete-config", "max.message.bytes")...)
	checkTopicConfigs(t, addr, topic, configs(onTopic(topic, "--describe")...), map[string]string{"retention.ms": "7200000"})
	r := kafkaTool(t, addr, kafkaConfigs, onTopic(topic, "--alter", "--add-config", "retention.ms=abc")...)
	if r.code == 0 || !strings.Contains(r.output(), "retention.ms") {
		t.Errorf("kafka-configs --add-config retention.ms=abc: exit %d\n%s", r.code, r.output())
	}

	checkBrokerConfigs(t, addr)
	// A cluster-wide default: the topic that overrides retention.ms keeps
	// its own, the other inherits it.
	out = configs("--entity-type", "brokers", "--entity-default", "--alter", "--add-config", "log.retention.ms=86400000")
	if !strings.Contains(out, "Completed updating default config for brokers in the cluster.") {
		t.Errorf("kafka-configs --alter --entity-default printed %q", out)
	}
	if got := parseConfigLines(configs("--entity-type", "brokers", "--entity-default", "--describe")); got["log.retention.ms"] != "86400000" {
		t.Errorf("kafka-configs --describe --entity-default: %v", got)
	}
	for name, want := range map[string]string{topic: "7200000", plain: "86400000"} {
		if got := parseConfigLines(configs(onTopic(name, "--describe", "--all")...))["retention.ms"]; got != want {
			t.Errorf("%s: retention.ms=%s under a cluster default of 86400000, want %s", name, got, want)
		}
	}
	configs("--entity-type", "brokers", "--entity-default", "--alter", "--delete-config", "log.retention.ms")
	if got := parseConfigLines(configs(onTopic(plain, "--describe", "--all")...))["retention.ms"]; got != "604800000" {
		t.Errorf("%s: retention.ms=%s after the cluster default was deleted, want 604800000", plain, got)
	}
}

// checkTopicConfigs compares kafka-configs --describe of a topic (its
// dynamic configs) with want and with `broker topics describe`.
func checkTopicConfigs(t *testing.T, addr, topic, described string, want map[string]string) {
	t.Helper()
	got := parseConfigLines(described)
	cli := describeTopicCLI(t, addr, topic).Configs
	if !maps.Equal(got, want) || !maps.Equal(cli, want) {
		t.Errorf("%s configs: kafka-configs %v, broker topics describe %v, want %v", topic, got, cli, want)
	}
}

// checkBrokerConfigs compares kafka-configs --describe --all of the broker
// with what DescribeConfigs answers kadm.
func checkBrokerConfigs(t *testing.T, addr string) {
	t.Helper()
	adm := kadmFor(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	meta, err := adm.BrokerMetadata(ctx)
	if err != nil || len(meta.Brokers) != 1 {
		t.Fatalf("broker metadata: %v %v", meta.Brokers, err)
	}
	id := meta.Brokers[0].NodeID
	rcs, err := adm.DescribeBrokerConfigs(ctx, id)
	if err == nil && len(rcs) == 1 {
		err = rcs[0].Err
	}
	if err != nil || len(rcs) != 1 {
		t.Fatalf("describe broker %d configs: %v", id, err)
	}
	want := map[string]string{}
	for _, c := range rcs[0].Configs {
		want[c.Key] = c.MaybeValue()
		if c.Value == nil {
			want[c.Key] = "null"
		}
	}
	got := parseConfigLines(mustKafkaTool(t, addr, kafkaConfigs, "--entity-type", "brokers", "--entity-name", strconv.Itoa(int(id)), "--describe", "--all"))
	if !maps.Equal(got, want) {
		t.Errorf("kafka-configs --describe --all of broker %d: %v\nDescribeConfigs: %v", id, got, want)
	}
	if got["message.max.bytes"] == "" || got["log.retention.ms"] == "" {
		t.Errorf("kafka-configs --describe --all of broker %d lacks message.max.bytes or log.retention.ms: %v", id, got)
	}
}
