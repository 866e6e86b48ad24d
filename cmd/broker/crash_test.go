package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/internal/testwait"
)

// ackLog records which produced values were acknowledged.
type ackLog struct {
	mu     sync.Mutex // guards acked and failed
	acked  map[string]bool
	failed []error
	done   sync.WaitGroup
}

// produceSequence produces n uniquely-valued records with an idempotent
// franz-go producer that retries forever, so records in flight when the
// broker dies are retried into the restarted broker. It paces itself (about
// 10,000 records/s at most) so that a crash lands in the middle of the run.
func produceSequence(ctx context.Context, cl *kgo.Client, topic string, n int, acks *ackLog) {
	for i := 0; i < n && ctx.Err() == nil; i++ {
		if i%50 == 49 {
			time.Sleep(5 * time.Millisecond)
		}
		v := fmt.Sprintf("rec-%06d", i)
		acks.done.Add(1)
		cl.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(v), Value: []byte(v)}, func(r *kgo.Record, err error) {
			defer acks.done.Done()
			acks.mu.Lock()
			defer acks.mu.Unlock()
			if err != nil {
				acks.failed = append(acks.failed, err)
				return
			}
			acks.acked[string(r.Value)] = true
		})
	}
}

// snapshot returns the values acknowledged so far.
func (a *ackLog) snapshot() map[string]bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return maps.Clone(a.acked)
}

func (a *ackLog) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.acked)
}

// waitAcked waits until at least n records are acknowledged.
func (a *ackLog) waitAcked(t *testing.T, n int) {
	t.Helper()
	testwait.Until(t, time.Minute, func() bool { return a.count() >= n }, "only %v records acknowledged, waited for %d",
		testwait.Later(func() string { return fmt.Sprint(a.count()) }), n)
}

// tearWALTail appends a torn, never-acknowledged frame to the newest WAL
// segment, as a power loss in the middle of a write leaves it, and returns
// the segment's path and its size before the tear.
func tearWALTail(t *testing.T, dataDir string, junk []byte) (string, int64) {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dataDir, "wal", "*.wal"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no WAL segments (%v)", err)
	}
	sort.Strings(segs)
	path := segs[len(segs)-1]
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(junk); err != nil {
		t.Fatal(err)
	}
	return path, st.Size()
}

// readTopic consumes every partition of topic from the start to its high
// watermark and returns the records per partition.
func readTopic(t *testing.T, addr, topic string) map[int32][]*kgo.Record {
	t.Helper()
	ctx, _ := ctxFor(t, 120*time.Second)
	adm, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	ends := listEndOffsets(ctx, t, kadm.NewClient(adm), topic)
	want := 0
	ends.Each(func(o kadm.ListedOffset) { want += int(o.Offset) })
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	out := map[int32][]*kgo.Record{}
	for got := 0; got < want; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %d of %d records: %v", got, want, err)
		}
		fs.EachError(func(tp string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", tp, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			out[r.Partition] = append(out[r.Partition], r)
			got++
		})
	}
	return out
}

// checkExactlyOnce asserts every acknowledged value is present exactly once
// and every partition's offsets run from 0 without a gap.
func checkExactlyOnce(t *testing.T, parts map[int32][]*kgo.Record, acks *ackLog) {
	t.Helper()
	seen := map[string]int{}
	for p, recs := range parts {
		for i, r := range recs {
			if r.Offset != int64(i) {
				t.Fatalf("partition %d: record %d has offset %d: offsets not contiguous", p, i, r.Offset)
			}
			seen[string(r.Value)]++
		}
	}
	acks.mu.Lock()
	defer acks.mu.Unlock()
	for v := range acks.acked {
		if seen[v] != 1 {
			t.Fatalf("acknowledged record %s read %d times, want exactly once", v, seen[v])
		}
	}
	for v, n := range seen {
		if n != 1 {
			t.Fatalf("record %s stored %d times", v, n)
		}
	}
	if len(acks.failed) > 0 {
		t.Fatalf("%d produce failures, first: %v", len(acks.failed), acks.failed[0])
	}
}

// TestCrashDuringIdempotentProduce crashes the broker during sustained
// idempotent produce and restarts it on the same data dir and bucket while
// the producer keeps retrying: every acknowledged record is readable exactly
// once, offsets contiguous, on every object store backend. Each case also
// checks what only its crash leaves behind (see crashCases).
func TestCrashDuringIdempotentProduce(t *testing.T) {
	for _, b := range crashBackends() {
		t.Run(b.name, func(t *testing.T) {
			for _, tc := range crashCases() {
				if b.sigkillOnly && tc.name != "sigkill" {
					continue
				}
				t.Run(tc.name, func(t *testing.T) { runCrashCase(t, b, tc) })
			}
		})
	}
}

// runCrashCase starts a broker on b, produces 20,000 records with an
// idempotent producer that retries forever, crashes the broker with tc once
// records are acknowledged (or lets tc's crash seam pick the moment),
// restarts it and checks that every acknowledged record is there exactly
// once, then runs tc's own check.
func runCrashCase(t *testing.T, b crashBackend, tc crashCase) {
	dir := t.TempDir()
	storeFlags, env, url := b.bucket(t, dir)
	flags := append(append([]string{"--upload-interval", "100ms"}, storeFlags...), tc.flags...)
	r := &crashRun{dir: dir, store: url}
	first := startProc(t, dir, "", append(env, tc.env...), append(flags, tc.firstFlags...)...)
	ctx, cancel := ctxFor(t, 180*time.Second)
	defer cancel()
	createTopics(t, first.addr, "crash", 4)
	cl, err := kgo.NewClient(kgo.SeedBrokers(first.addr), kgo.ProducerLinger(2*time.Millisecond),
		kgo.RecordRetries(1<<30), kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	acks := &ackLog{acked: map[string]bool{}}
	const total = 20000
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		produceSequence(ctx, cl, "crash", total, acks)
	}()
	if tc.env == nil {
		acks.waitAcked(t, 3000) // the crash seam picks its own moment
	}
	tc.crash(t, first, r)
	r.acked = acks.snapshot()
	if len(r.acked) == total {
		t.Fatalf("all %d records were acknowledged before the crash: nothing was tested", total)
	}
	t.Logf("crashed with %d of %d records acknowledged", len(r.acked), total)
	r.restarted = startProc(t, dir, first.addr, env, flags...)
	r.startLogs = startLogs(t, r.restarted)
	<-produced
	acks.done.Wait()
	r.parts = readTopic(t, r.restarted.addr, "crash")
	checkExactlyOnce(t, r.parts, acks)
	if acks.count() != total {
		t.Fatalf("%d of %d records acknowledged after the restart", acks.count(), total)
	}
	tc.check(t, r)
}

// TestRestartReadsFromObjectStore: after a graceful shutdown (which uploads
// everything) and a restart, a fetch from offset 0 is served by the object
// store, as the broker's metrics show.
func TestRestartReadsFromObjectStore(t *testing.T) {
	dir := t.TempDir()
	p := startProc(t, dir, "", nil)
	createTopics(t, p.addr, "cold", 2)
	ctx, _ := ctxFor(t, 60*time.Second)
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DefaultProduceTopic("cold"))
	if err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for i := range 500 {
		recs = append(recs, &kgo.Record{Value: []byte(fmt.Sprintf("cold-%d", i))})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	if err := p.terminate(); err != nil {
		t.Fatalf("graceful shutdown: %v", err)
	}
	p2 := startProc(t, dir, "", nil)
	if got := p2.metric("sediment_wal_backlog_bytes"); got > 64 {
		t.Fatalf("WAL backlog %v bytes after a graceful shutdown; want everything uploaded", got)
	}
	parts := readTopic(t, p2.addr, "cold")
	n := 0
	for _, rs := range parts {
		n += len(rs)
	}
	if n != 500 {
		t.Fatalf("read %d records, want 500", n)
	}
	if got := p2.metric("sediment_fetch_reads_total", `source="object"`); got == 0 {
		t.Fatalf("no fetch was served by the object store\n%s", p2.logs.String())
	}
	if got := p2.metric("sediment_object_requests_total", `op="get"`, `result="ok"`); got == 0 {
		t.Fatal("no object GET recorded")
	}
}

func createTopics(t *testing.T, addr, topic string, partitions int32) {
	t.Helper()
	ctx, _ := ctxFor(t, 30*time.Second)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

// listEndOffsets lists a topic's end offsets, asking again while a
// partition has no leader yet: a broker of a cluster that just started
// takes its partitions a moment after it answers (LEADER_NOT_AVAILABLE, a
// retriable error clients wait out).
func listEndOffsets(ctx context.Context, t *testing.T, adm *kadm.Client, topic string) kadm.ListedOffsets {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err == nil && ends.Error() == nil {
			return ends
		}
		if err == nil {
			err = ends.Error()
		}
		select {
		case <-ctx.Done():
			t.Fatalf("end offsets of %s: %v", topic, err)
		case <-tick.C:
		}
	}
}
