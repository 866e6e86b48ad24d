//go:build interop

package main

// Kafka Streams against Sediment: the word count of interop/java
// (io.sediment.interop.streams.WordCount) with its repartition topic, its
// RocksDB state store and the store's changelog topic.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/interop/jvm"
)

// TestInteropStreamsWordCount runs the word count over a known text and
// checks every count exactly; stops it, deletes its local state dir,
// produces more text and restarts it: the counts go on exactly from where
// they were, so the store was restored from its changelog topic on
// Sediment (the app reports how many changelog records it restored).
//
// The app runs with processing.guarantee=at_least_once and is stopped
// cleanly (SIGTERM, whose shutdown hook closes the Streams client and
// commits), which is what keeps its counts exact. The exactly_once_v2 case,
// a SIGKILL mid-run with counts still exact, is streams_eos_interop_test.go.
// The changelog runs with cleanup.policy=delete until compacted topics land
// (issue 22): the app sets it, and this test checks it.
func TestInteropStreamsWordCount(t *testing.T) {
	javaClasspath(t)
	tb := startTestBroker(t, "")
	testWordCount(t, tb.addr)
}

// TestInteropStreamsWordCountApacheKafka runs the same against the
// reference Apache Kafka broker: what the Sediment test expects is what
// Kafka does.
func TestInteropStreamsWordCountApacheKafka(t *testing.T) {
	k, err := jvm.StartKafka(context.Background(), javaClasspath(t), jvm.KafkaOptions{Dir: t.TempDir(), Heap: "384m"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	testWordCount(t, k.Addr)
}

func testWordCount(t *testing.T, addr string) {
	const input, output = "wc-text", "wc-counts"
	createTopics(t, addr, input, 3)
	createTopics(t, addr, output, 3)
	appID := "wordcount-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	stateDir := t.TempDir()

	first := wordCountText(0, 400)
	produceStreamsText(t, addr, input, first)
	app := startWordCount(t, addr, appID, input, output, stateDir)
	waitWordCounts(t, addr, output, app, countWords(first))
	waitRepartitionPurged(t, addr, appID+"-words-repartition", app)
	app.stop(t)
	checkStreamsTopics(t, addr, appID, 3)
	checkCommittedAtEnd(t, addr, appID, input)

	if err := os.RemoveAll(stateDir); err != nil {
		t.Fatal(err)
	}
	second := wordCountText(400, 300)
	produceStreamsText(t, addr, input, second)
	app = startWordCount(t, addr, appID, input, output, stateDir)
	waitWordCounts(t, addr, output, app, countWords(append(first, second...)))
	app.stop(t)
	if got, want := restoredRecords(t, app, appID+"-counts-changelog"), len(wordsOf(first)); got != want {
		t.Fatalf("the restart restored %d changelog records, want %d (one per word of the first text)\n%s", got, want, app.output())
	}
	checkCommittedAtEnd(t, addr, appID, input)
}

var wordCountVocabulary = strings.Fields("stream sediment broker fox log offset the a partition rocks")

// wordCountText makes n lines, starting at line from: each a few words of
// the vocabulary in a varying case, split by separators Java's \W+ splits on.
func wordCountText(from, n int) []string {
	seps := []string{" ", ", ", ". ", " - ", "; "}
	out := make([]string, n)
	for i := range out {
		line := from + i
		var b strings.Builder
		for j := 0; j < 1+line%6; j++ {
			w := wordCountVocabulary[(line*7+j*3)%len(wordCountVocabulary)]
			if (line+j)%4 == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			if j > 0 {
				b.WriteString(seps[(line+j)%len(seps)])
			}
			b.WriteString(w)
		}
		out[i] = b.String()
	}
	return out
}

func wordsOf(lines []string) []string {
	var out []string
	for _, l := range lines {
		out = append(out, strings.FieldsFunc(strings.ToLower(l), func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_')
		})...)
	}
	return out
}

func countWords(lines []string) map[string]int64 {
	counts := map[string]int64{}
	for _, w := range wordsOf(lines) {
		counts[w]++
	}
	return counts
}

// produceStreamsText writes lines to topic, keyed by line so that they spread
// over its partitions.
func produceStreamsText(t *testing.T, addr, topic string, lines []string) {
	t.Helper()
	ctx, _ := ctxFor(t, time.Minute)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, len(lines))
	for i, l := range lines {
		recs[i] = &kgo.Record{Key: []byte(l + "#" + strconv.Itoa(i)), Value: []byte(l)}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", topic, err)
	}
}

// waitWordCounts reads the output topic from the start (with the client
// options opts) until the latest count of every word is the one wanted. A
// count above the wanted one, a word never written or an app that failed
// ends the wait at once.
func waitWordCounts(t *testing.T, addr, topic string, app *streamsApp, want map[string]int64, opts ...kgo.Opt) {
	t.Helper()
	ctx, _ := ctxFor(t, 4*time.Minute)
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(500 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := map[string]int64{}
	for !sameWordCounts(got, want) {
		if f := app.failure(); f != "" || app.exited() {
			t.Fatalf("the word count stopped before its counts were complete (%s)\n%s", f, app.output())
		}
		if ctx.Err() != nil {
			t.Fatalf("counts after 4 minutes: %v, want %v\n%s", got, want, app.output())
		}
		// A short poll, so that a failed app is seen while no counts come.
		pollCtx, cancel := context.WithTimeout(ctx, time.Second)
		fs := cl.PollFetches(pollCtx)
		cancel()
		for _, e := range fs.Errors() {
			if !errors.Is(e.Err, context.DeadlineExceeded) {
				t.Fatalf("read %s: %v", topic, e.Err)
			}
		}
		fs.EachRecord(func(r *kgo.Record) { got[string(r.Key)] = decodeWordCount(t, r) })
		for w, n := range got {
			if n > want[w] {
				t.Fatalf("count of %q is %d, want %d (all counts %v)\n%s", w, n, want[w], got, app.output())
			}
		}
	}
}

func decodeWordCount(t *testing.T, r *kgo.Record) int64 {
	t.Helper()
	if len(r.Value) != 8 {
		t.Fatalf("count of %q is %d bytes, want a Long's 8", r.Key, len(r.Value))
	}
	return int64(binary.BigEndian.Uint64(r.Value))
}

func sameWordCounts(got, want map[string]int64) bool {
	if len(got) != len(want) {
		return false
	}
	for w, n := range want {
		if got[w] != n {
			return false
		}
	}
	return true
}

// waitRepartitionPurged waits until Streams has deleted (DeleteRecords)
// records it consumed from its repartition topic: a log start offset above
// zero. Not up to the end: Streams purges after a commit only when its
// previous purge has finished, so the last records may stay.
func waitRepartitionPurged(t *testing.T, addr, topic string, app *streamsApp) {
	t.Helper()
	adm := streamsAdmin(t, addr)
	ctx, _ := ctxFor(t, 2*time.Minute)
	for {
		starts, err := adm.ListStartOffsets(ctx, topic)
		if err == nil {
			err = starts.Error()
		}
		if err != nil {
			t.Fatalf("start offsets of %s: %v", topic, err)
		}
		purged := false
		starts.Each(func(o kadm.ListedOffset) { purged = purged || o.Offset > 0 })
		if purged {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("nothing of %s purged in 2 minutes: start offsets %v\n%s", topic, starts, app.output())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// checkStreamsTopics checks the internal topics Streams created on
// Sediment, with the partitions of the input and the configs it asked for.
func checkStreamsTopics(t *testing.T, addr, appID string, partitions int) {
	t.Helper()
	adm := streamsAdmin(t, addr)
	ctx, _ := ctxFor(t, 30*time.Second)
	repartition, changelog := appID+"-words-repartition", appID+"-counts-changelog"
	details, err := adm.ListTopics(ctx, repartition, changelog)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{repartition, changelog} {
		d, ok := details[name]
		if !ok || d.Err != nil || len(d.Partitions) != partitions {
			t.Fatalf("internal topic %s: exists %v, err %v, %d partitions, want %d", name, ok, d.Err, len(d.Partitions), partitions)
		}
	}
	// A repartition topic keeps records forever: Streams deletes what it
	// consumed with DeleteRecords after each commit.
	checkStreamsTopicConfigs(t, adm, repartition, map[string]string{
		"cleanup.policy": "delete", "retention.ms": "-1", "segment.bytes": "52428800", "message.timestamp.type": "CreateTime",
	})
	// Streams asks for a compacted changelog; the app overrides it until
	// Sediment compacts (issue 22).
	checkStreamsTopicConfigs(t, adm, changelog, map[string]string{
		"cleanup.policy": "delete", "retention.ms": "-1", "message.timestamp.type": "CreateTime",
	})
}

func checkStreamsTopicConfigs(t *testing.T, adm *kadm.Client, topic string, want map[string]string) {
	t.Helper()
	ctx, _ := ctxFor(t, 30*time.Second)
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On(topic, nil)
	if err == nil {
		err = rc.Err
	}
	if err != nil {
		t.Fatalf("describe configs of %s: %v", topic, err)
	}
	got := map[string]kadm.Config{}
	for _, c := range rc.Configs {
		got[c.Key] = c
	}
	for k, v := range want {
		c := got[k]
		if c.MaybeValue() != v || c.Source.String() != "DYNAMIC_TOPIC_CONFIG" {
			t.Fatalf("%s: %s = %q (source %v), want %q set on the topic", topic, k, c.MaybeValue(), c.Source, v)
		}
	}
}

// checkCommittedAtEnd checks group committed the end offset of every
// partition of topic.
func checkCommittedAtEnd(t *testing.T, addr, group, topic string) {
	t.Helper()
	ctx, _ := ctxFor(t, 30*time.Second)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := adm.FetchOffsetsForTopics(ctx, group, topic)
	if err != nil {
		t.Fatal(err)
	}
	ends.Each(func(o kadm.ListedOffset) {
		c, ok := committed.Lookup(topic, o.Partition)
		if !ok || c.Err != nil || c.At != o.Offset {
			t.Errorf("group %s on %s[%d]: committed %d (found %v, err %v), end offset %d", group, topic, o.Partition, c.At, ok, c.Err, o.Offset)
		}
	})
}

// restoredRecords sums what the app reported restoring from changelog.
func restoredRecords(t *testing.T, app *streamsApp, changelog string) int {
	t.Helper()
	total := 0
	for _, l := range app.printed("RESTORED ") {
		f := strings.Fields(l) // RESTORED topic-partition store records
		if len(f) != 4 || !strings.HasPrefix(f[1], changelog+"-") {
			t.Fatalf("unexpected restore line %q", l)
		}
		n, err := strconv.Atoi(f[3])
		if err != nil {
			t.Fatalf("restore line %q: %v", l, err)
		}
		total += n
	}
	return total
}

func streamsAdmin(t *testing.T, addr string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(fmt.Errorf("admin client: %w", err))
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}
