//go:build interop

package main

// The Java client (kafka-clients, pinned in interop/java/pom.xml) against
// Sediment. Each test starts its own broker and runs one check program of
// interop/java/src/main/java/io/sediment/interop/client, which reads back
// every record byte for byte and requires the exact Java exception class
// of every error it provokes; a program exits non-zero on its first
// mismatch. `make java-interop` builds them.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/interop/jvm"
)

const javaClientPkg = "io.sediment.interop.client."

// runJavaCheck runs one check program against addr and logs what it checked.
func runJavaCheck(t *testing.T, program, addr, prefix string) {
	t.Helper()
	res := runJava(t, javaClientPkg+program, addr, prefix)
	t.Log(strings.TrimSpace(res.Stdout))
	if !strings.Contains(res.Stdout, program+": all checks passed") {
		t.Fatalf("%s did not report success:\n%s\nstderr:\n%s", program, res.Stdout, res.Stderr)
	}
}

// TestInteropJavaProducer: KafkaProducer with its idempotent default and
// every codec, headers, a batch of exactly max.message.bytes and one byte
// over, acks 0, 1 and all. Then the stored batches are read here: each
// keeps its producer's codec, and idempotent ones carry a producer id.
func TestInteropJavaProducer(t *testing.T) {
	tb := startTestBroker(t, "")
	runJavaCheck(t, "ProducerCheck", tb.addr, "jp")

	codecs := map[string]uint8{"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
	for name, codec := range codecs {
		recs := fetchAll(t, tb.addr, "jp-codec-"+name, 300)
		for _, r := range recs {
			if got := r.Attrs.CompressionType(); got != codec {
				t.Fatalf("jp-codec-%s offset %d: stored with codec %d, want %d", name, r.Offset, got, codec)
			}
			if r.ProducerID < 0 {
				t.Fatalf("jp-codec-%s offset %d: no producer id: the Java producer's default is idempotent", name, r.Offset)
			}
		}
	}
	for i, r := range fetchAll(t, tb.addr, "jp-acks", 150) {
		if idempotent := i >= 100; idempotent != (r.ProducerID >= 0) {
			t.Fatalf("jp-acks offset %d: producer id %d; want one only for acks=all (idempotent)", r.Offset, r.ProducerID)
		}
	}
}

// TestInteropJavaConsumer: KafkaConsumer's seek (and OffsetOutOfRange
// with no reset policy), offsetsForTimes, pause/resume and committed
// offsets.
func TestInteropJavaConsumer(t *testing.T) {
	tb := startTestBroker(t, "")
	runJavaCheck(t, "ConsumerCheck", tb.addr, "jc")
}

// TestInteropJavaConsumerGroups: the classic protocol with the range,
// roundrobin, sticky and cooperative-sticky assignors (a second member
// joins: two partitions each, the eager ones revoke everything, the
// cooperative one only what moves, nothing is read twice), and static
// membership (a restart keeps its partitions at the same generation).
func TestInteropJavaConsumerGroups(t *testing.T) {
	tb := startTestBroker(t, "")
	runJavaCheck(t, "GroupCheck", tb.addr, "jg")
}

// TestInteropJavaAdmin: AdminClient on topics (create and its errors,
// describe by name and id, partitions, delete), configs (describe,
// incremental alter and their errors), listOffsets with every spec,
// deleteRecords, describeCluster and consumer groups (list, describe, alter
// and delete offsets, delete), each refusal with its exact exception.
func TestInteropJavaAdmin(t *testing.T) {
	tb := startTestBroker(t, "")
	runJavaCheck(t, "AdminCheck", tb.addr, "ja")
	// The 4.x client describes topics with DescribeTopicPartitions when the
	// broker offers it, and falls back to Metadata when not.
	if n := requestsServed(t, tb, "DescribeTopicPartitions"); n == 0 {
		t.Fatal("AdminCheck's describeTopics sent no DescribeTopicPartitions request")
	}
}

// TestInteropJavaTransactions: a transactional KafkaProducer in a
// consume-transform-produce loop with sendOffsetsToTransaction, commits and
// an abort; a transaction left open (read_committed stops at the last
// stable offset, and Admin lists and describes it and its producer); a
// zombie fenced by a newer producer of its transactional.id, and one by
// Admin.fenceProducers; a timeout above the maximum. read_committed consumers
// see exactly the committed records and the group's offsets move only on
// commit.
func TestInteropJavaTransactions(t *testing.T) {
	tb := startTestBroker(t, "")
	runJavaCheck(t, "TxnCheck", tb.addr, "jt")
}

// requestsServed reads the broker's sediment_requests_total for api.
func requestsServed(t *testing.T, tb *testBroker, api string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	tb.b.http.Handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	prefix := `sediment_requests_total{api="` + api + `"} `
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metrics line %q: %v", line, err)
			}
			return n
		}
	}
	return 0
}

// TestInteropJavaChecksOnKafka runs the same check programs against a
// reference Apache Kafka broker: what they require of Sediment is what
// Kafka does.
func TestInteropJavaChecksOnKafka(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	k, err := jvm.StartKafka(ctx, javaClasspath(t), jvm.KafkaOptions{Dir: t.TempDir(), Heap: "512m", StartTimeout: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	for _, program := range []string{"ProducerCheck", "ConsumerCheck", "GroupCheck", "AdminCheck", "TxnCheck"} {
		prefix := "kafka-" + strings.ToLower(program)
		t.Run(program, func(t *testing.T) { runJavaCheck(t, program, k.Addr, prefix) })
	}
}

// fetchAll reads want records of topic (all partitions) with franz-go.
func fetchAll(t *testing.T, addr, topic string, want int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxPartitionBytes(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out []*kgo.Record
	for len(out) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%s: read %d records, want %d", topic, len(out), want)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("%s: fetch: %v", topic, err) })
		out = append(out, fs.Records()...)
	}
	return out
}
