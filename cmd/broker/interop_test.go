//go:build interop

package main

// Interop tests with clients from Debian packages: kcat (librdkafka),
// kafka-python and confluent-kafka-python. `make interop` runs them; a
// missing client is a failure that says what to install, never a skip.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// systemPython is Debian's interpreter: the first python3 on PATH may be
// another one that cannot see Debian's modules.
const systemPython = "/usr/bin/python3"

func requireTool(t *testing.T, path, pkg string) {
	t.Helper()
	if _, err := exec.LookPath(path); err != nil {
		t.Fatalf("%s not found: install it with `apt-get install -y %s` (make interop does)", path, pkg)
	}
}

func requirePythonModule(t *testing.T, module, pkg string) {
	t.Helper()
	requireTool(t, systemPython, "python3")
	if out, err := exec.Command(systemPython, "-c", "import "+module).CombinedOutput(); err != nil {
		t.Fatalf("python module %s missing (%s): install it with `apt-get install -y %s`", module, bytes.TrimSpace(out), pkg)
	}
}

func runCmd(t *testing.T, stdin string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\nstderr:\n%s", name, args, err, stderr.String())
	}
	return stdout.String()
}

func lines(n int, prefix string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%04d", prefix, i)
	}
	return out
}

// TestInteropKcat: kcat (librdkafka) lists metadata, produces with every
// codec and consumes the records back.
func TestInteropKcat(t *testing.T) {
	requireTool(t, "kcat", "kcat")
	tb := startTestBroker(t, "")
	meta := runCmd(t, "", "kcat", "-b", tb.addr, "-L")
	if !strings.Contains(meta, "1 brokers:") {
		t.Fatalf("kcat -L:\n%s", meta)
	}
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			topic := "kcat-" + codec
			createTopics(t, tb.addr, topic, 2)
			want := lines(300, codec)
			runCmd(t, strings.Join(want, "\n")+"\n", "kcat", "-b", tb.addr, "-P", "-t", topic,
				"-z", codec, "-X", "acks=all", "-X", "enable.idempotence=true")
			got := runCmd(t, "", "kcat", "-b", tb.addr, "-C", "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%s\n")
			checkSameSet(t, strings.Fields(got), want)
		})
	}
}

// TestInteropKafkaPython: kafka-python, which speaks old protocol versions
// (Metadata v0-v3 with implicit auto-creation), produces with every codec
// it supports and consumes back with assign + seek.
func TestInteropKafkaPython(t *testing.T) {
	requirePythonModule(t, "kafka", "python3-kafka")
	requirePythonModule(t, "snappy", "python3-snappy")
	requirePythonModule(t, "lz4", "python3-lz4")
	requirePythonModule(t, "zstandard", "python3-zstandard")
	tb := startTestBroker(t, "")
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			topic := "kpy-" + codec // created by kafka-python's metadata request
			out := runCmd(t, "", systemPython, "-c", kafkaPythonScript, tb.addr, topic, codec, "200")
			checkPythonResult(t, out, lines(200, topic))
		})
	}
}

const kafkaPythonScript = `
import json, sys
from kafka import KafkaProducer, KafkaConsumer, TopicPartition
addr, topic, codec, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
p = KafkaProducer(bootstrap_servers=addr, acks='all', compression_type=None if codec == 'none' else codec)
for i in range(n):
    p.send(topic, key=b'k%d' % i, value=('%s-%04d' % (topic, i)).encode())
p.flush(timeout=60)
p.close()
c = KafkaConsumer(bootstrap_servers=addr, enable_auto_commit=False, consumer_timeout_ms=10000)
parts = [TopicPartition(topic, q) for q in c.partitions_for_topic(topic)]
c.assign(parts)
c.seek_to_beginning(*parts)
got = []
for m in c:
    got.append(m.value.decode())
    if len(got) == n:
        break
c.close()
print(json.dumps({"values": got}))
`

// TestInteropConfluentPython: confluent-kafka-python (librdkafka) with an
// idempotent producer and every codec.
func TestInteropConfluentPython(t *testing.T) {
	requirePythonModule(t, "confluent_kafka", "python3-confluent-kafka")
	tb := startTestBroker(t, "")
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			topic := "ckpy-" + codec
			createTopics(t, tb.addr, topic, 3)
			out := runCmd(t, "", systemPython, "-c", confluentPythonScript, tb.addr, topic, codec, "300")
			checkPythonResult(t, out, lines(300, topic))
		})
	}
}

const confluentPythonScript = `
import json, sys
from confluent_kafka import Producer, Consumer, TopicPartition, OFFSET_BEGINNING
addr, topic, codec, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
errors = []
def report(err, msg):
    if err is not None:
        errors.append(str(err))
p = Producer({'bootstrap.servers': addr, 'enable.idempotence': True, 'acks': 'all', 'compression.codec': codec})
for i in range(n):
    p.produce(topic, key=b'k%d' % i, value=('%s-%04d' % (topic, i)).encode(), on_delivery=report)
    p.poll(0)
left = p.flush(60)
if left or errors:
    print(json.dumps({"error": "undelivered %d: %s" % (left, errors[:3])}))
    sys.exit(0)
c = Consumer({'bootstrap.servers': addr, 'group.id': 'unused', 'enable.auto.commit': False, 'enable.partition.eof': True})
meta = c.list_topics(topic, timeout=30)
parts = [TopicPartition(topic, q, OFFSET_BEGINNING) for q in meta.topics[topic].partitions]
c.assign(parts)
got, eof = [], set()
while len(eof) < len(parts):
    m = c.poll(30)
    if m is None:
        break
    if m.error():
        if m.error().code() == -191:  # _PARTITION_EOF
            eof.add(m.partition())
            continue
        print(json.dumps({"error": str(m.error())}))
        sys.exit(0)
    got.append(m.value().decode())
c.close()
print(json.dumps({"values": got}))
`

func checkPythonResult(t *testing.T, out string, want []string) {
	t.Helper()
	var res struct {
		Values []string `json:"values"`
		Error  string   `json:"error"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(lastLine(out))), &res); err != nil {
		t.Fatalf("client output is not the expected JSON: %v\n%s", err, out)
	}
	if res.Error != "" {
		t.Fatalf("client error: %s", res.Error)
	}
	checkSameSet(t, res.Values, want)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// checkSameSet asserts got holds exactly the values of want, each once.
func checkSameSet(t *testing.T, got, want []string) {
	t.Helper()
	seen := map[string]int{}
	for _, v := range got {
		seen[v]++
	}
	for _, w := range want {
		if seen[w] != 1 {
			t.Fatalf("value %q read %d times (got %d values, want %d)", w, seen[w], len(got), len(want))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("got %d values, want %d", len(got), len(want))
	}
}
