//go:build interop

package main

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/interop/jvm"
)

// TestInteropPyPIConfluentTransactions: confluent-kafka's transactional
// producer in a consume-transform-produce loop with a read_committed group
// member (confluent_txn.py): chunks of the input copied to the output in
// transactions with their input offsets, one aborted and sent again. A
// read_committed consumer reads every record exactly once, byte for byte;
// franz-go read_uncommitted also sees the aborted chunk; the group
// committed the input's end.
func TestInteropPyPIConfluentTransactions(t *testing.T) {
	py := pypiVenv(t)
	tb := startTestBroker(t, "")
	testPyPITransactions(t, py, tb.addr)
}

// TestInteropConfluentPythonTransactions runs the same script with
// Debian's confluent-kafka (python3-confluent-kafka, its own librdkafka).
func TestInteropConfluentPythonTransactions(t *testing.T) {
	requirePythonModule(t, "confluent_kafka", "python3-confluent-kafka")
	tb := startTestBroker(t, "")
	testPyPITransactions(t, pypiPython{python: systemPython, scripts: "../../interop/python"}, tb.addr)
}

// TestInteropPyPIConfluentTransactionsApacheKafka runs the same against
// the reference Apache Kafka broker.
func TestInteropPyPIConfluentTransactionsApacheKafka(t *testing.T) {
	py := pypiVenv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	k, err := jvm.StartKafka(ctx, javaClasspath(t), jvm.KafkaOptions{Dir: t.TempDir(), Heap: "512m", StartTimeout: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	testPyPITransactions(t, py, k.Addr)
}

func testPyPITransactions(t *testing.T, py pypiPython, addr string) {
	const n, chunk = 200, 50
	in, out, group := "txn-in", "txn-out", "txn-etl"
	createTopics(t, addr, in, 3)
	createTopics(t, addr, out, 3)
	produceGenerated(t, addr, in, 0, n)
	checkPyPIRecords(t, py.run(t, "confluent_txn.py", addr, in, out, group, "200"), 0, n)
	checkCommittedAtEnd(t, addr, group, in)

	ctx, _ := ctxFor(t, time.Minute)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(out), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for got := 0; got < n+chunk; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read_uncommitted: %d records of %s, want %d (the aborted chunk too)", got, out, n+chunk)
		}
		got += fs.NumRecords()
	}
}
