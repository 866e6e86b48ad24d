//go:build interop

package main

// Kafka Streams with processing.guarantee=exactly_once_v2 against
// Sediment: the word count of streams_interop_test.go, killed with SIGKILL
// in the middle of a run, keeps every count exact.

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/interop/jvm"
)

// TestInteropStreamsWordCountExactlyOnce runs the word count with
// exactly_once_v2 over a known text and checks every count exactly,
// reading the output read_committed; then produces more text, SIGKILLs the
// app while it works through it, deletes its state dir and starts it
// again. The counts read read_committed never go past the exact ones, and
// end exact: what the killed app had written in its open transaction was
// aborted (by the transaction timeout: the new app's process id, and so
// its transactional id, is new), its uncommitted input offsets not kept,
// and the store restored from the committed changelog only. `broker
// transactions list` then shows the app's transactional ids committed.
func TestInteropStreamsWordCountExactlyOnce(t *testing.T) {
	javaClasspath(t)
	tb := startTestBroker(t, "")
	testWordCountExactlyOnce(t, tb.addr)
}

// TestInteropStreamsWordCountExactlyOnceApacheKafka runs the same against
// the reference Apache Kafka broker.
func TestInteropStreamsWordCountExactlyOnceApacheKafka(t *testing.T) {
	k, err := jvm.StartKafka(context.Background(), javaClasspath(t), jvm.KafkaOptions{Dir: t.TempDir(), Heap: "384m"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	testWordCountExactlyOnce(t, k.Addr)
}

func testWordCountExactlyOnce(t *testing.T, addr string) {
	const input, output, eos = "wc-eos-text", "wc-eos-counts", "exactly_once_v2"
	createTopics(t, addr, input, 3)
	createTopics(t, addr, output, 3)
	appID := "wordcount-eos-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	stateDir := t.TempDir()
	committed := kgo.FetchIsolationLevel(kgo.ReadCommitted())

	first := wordCountText(0, 400)
	produceStreamsText(t, addr, input, first)
	app := startWordCount(t, addr, appID, input, output, stateDir, eos)
	waitWordCounts(t, addr, output, app, countWords(first), committed)

	second := wordCountText(400, 600)
	produceStreamsText(t, addr, input, second)
	waitInputProgress(t, addr, appID, input, app)
	app.kill()
	if err := os.RemoveAll(stateDir); err != nil {
		t.Fatal(err)
	}
	app = startWordCount(t, addr, appID, input, output, stateDir, eos)
	waitWordCounts(t, addr, output, app, countWords(append(first, second...)), committed)
	app.stop(t)
	checkCommittedAtEnd(t, addr, appID, input)
	checkStreamsTransactions(t, addr, appID)
}

// checkStreamsTransactions checks, with `broker transactions list`, that
// the app committed through transactions: exactly_once_v2 gives each
// stream thread a transactional id APPID-PROCESSID-THREAD.
func checkStreamsTransactions(t *testing.T, addr, appID string) {
	t.Helper()
	var listed []struct {
		TransactionalID string `json:"transactional_id"`
		State           string `json:"state"`
	}
	brokerJSON(t, addr, &listed, "transactions", "list")
	committed := 0
	for _, l := range listed {
		if strings.HasPrefix(l.TransactionalID, appID+"-") && l.State == "CompleteCommit" {
			committed++
		}
	}
	if committed == 0 {
		t.Errorf("no transactional id of %s in state CompleteCommit: %+v", appID, listed)
	}
}

// waitInputProgress waits until the app has committed (in a transaction)
// some of the input produced after its first counts, but not all of it:
// the moment to kill it mid-run.
func waitInputProgress(t *testing.T, addr, group, topic string, app *streamsApp) {
	t.Helper()
	adm := streamsAdmin(t, addr)
	ctx, _ := ctxFor(t, 2*time.Minute)
	var before int64 = -1
	for {
		committed, err := adm.FetchOffsetsForTopics(ctx, group, topic)
		if err != nil {
			t.Fatalf("offsets of %s: %v", group, err)
		}
		var sum int64
		committed.Each(func(o kadm.OffsetResponse) { sum += max(o.At, 0) })
		if before < 0 {
			before = sum
		} else if sum > before {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("group %s committed nothing of the new input in 2 minutes (offsets %d)\n%s", group, sum, app.output())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
