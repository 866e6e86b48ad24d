package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceLabeled produces values "<prefix>-<i>" round-robin over partitions,
// acks=all, and fails the test on any error.
func produceLabeled(t *testing.T, addr, topic, prefix string, n, partitions int) {
	t.Helper()
	ctx := testCtx(t, 60*time.Second)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Partition: int32(i % partitions), Value: fmt.Appendf(nil, "%s-%d", prefix, i)}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce %s: %v", prefix, err)
	}
}

// bumpEpochs starts a new leader epoch on every partition of topic, as a
// change of owner will.
func bumpEpochs(t *testing.T, tb *testBroker, topic string) {
	t.Helper()
	tp, ok := tb.b.log.Topic(topic)
	if !ok {
		t.Fatalf("no topic %s", topic)
	}
	for _, p := range tp.Partitions() {
		if _, err := tb.b.log.BumpLeaderEpoch(context.Background(), p); err != nil {
			t.Fatalf("bump %s/%d: %v", topic, p.Index(), err)
		}
	}
}

// epochRequests counts the OffsetForLeaderEpoch requests a client got an
// answer to.
type epochRequests struct{ n atomic.Int64 }

func (h *epochRequests) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e2e kgo.BrokerE2E) {
	if key == int16(kmsg.OffsetForLeaderEpoch) && e2e.Err() == nil {
		h.n.Add(1)
	}
}

// consumeN polls cl until it has n records, failing on any fetch error.
func consumeN(t *testing.T, cl *kgo.Client, n int) []*kgo.Record {
	t.Helper()
	ctx := testCtx(t, 60*time.Second)
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %d of %d records: %v", len(out), n, err)
		}
		fs.EachError(func(tp string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", tp, p, err) })
		out = append(out, fs.Records()...)
	}
	return out
}

// checkEpochRecords asserts recs are exactly the values in want, each once and
// in offset order per partition, each carrying the leader epoch want gives.
func checkEpochRecords(t *testing.T, recs []*kgo.Record, want map[string]int32) {
	t.Helper()
	last := map[int32]int64{}
	for _, r := range recs {
		epoch, ok := want[string(r.Value)]
		if !ok {
			t.Fatalf("unexpected or repeated record %q at %d/%d", r.Value, r.Partition, r.Offset)
		}
		delete(want, string(r.Value))
		if r.LeaderEpoch != epoch {
			t.Errorf("record %q at %d/%d has leader epoch %d, want %d", r.Value, r.Partition, r.Offset, r.LeaderEpoch, epoch)
		}
		if prev, ok := last[r.Partition]; ok && r.Offset != prev+1 {
			t.Errorf("partition %d: offset %d after %d", r.Partition, r.Offset, prev)
		}
		last[r.Partition] = r.Offset
	}
	if len(want) > 0 {
		t.Fatalf("%d records never read", len(want))
	}
}

// wantValues adds produceLabeled' n values of prefix, expected at epoch, to
// into (a new map when nil).
func wantValues(prefix string, n int, epoch int32, into map[string]int32) map[string]int32 {
	if into == nil {
		into = map[string]int32{}
	}
	for i := range n {
		into[fmt.Sprintf("%s-%d", prefix, i)] = epoch
	}
	return into
}

// TestFranzConsumeFromListedStartOffsets is the sequence a new user tries:
// produce, kadm.ListStartOffsets, then kgo.ConsumePartitions with the listed
// offsets. They carry a leader epoch, so franz-go validates them with
// OffsetForLeaderEpoch (KIP-320) before fetching; every record must be read.
// Half the records are produced after a change of leader epoch, so the
// listed epoch (0) is an older one by the time it is validated.
func TestFranzConsumeFromListedStartOffsets(t *testing.T) {
	const partitions, half = 3, 600
	tb := startTestBroker(t, "")
	createTopics(t, tb.addr, "listed", partitions)
	produceLabeled(t, tb.addr, "listed", "a", half, partitions)
	bumpEpochs(t, tb, "listed")
	produceLabeled(t, tb.addr, "listed", "b", half, partitions)

	ctx := testCtx(t, 60*time.Second)
	adm, err := kgo.NewClient(kgo.SeedBrokers(tb.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	starts, err := kadm.NewClient(adm).ListStartOffsets(ctx, "listed")
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		t.Fatalf("list start offsets: %v", err)
	}
	starts.Each(func(o kadm.ListedOffset) {
		if o.Offset != 0 || o.LeaderEpoch != 0 {
			t.Errorf("listed start of %s/%d: offset %d epoch %d, want 0 0", o.Topic, o.Partition, o.Offset, o.LeaderEpoch)
		}
	})

	hook := &epochRequests{}
	cl, err := kgo.NewClient(kgo.SeedBrokers(tb.addr), kgo.ConsumePartitions(starts.KOffsets()),
		kgo.FetchMaxWait(200*time.Millisecond), kgo.WithHooks(hook))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	recs := consumeN(t, cl, 2*half)
	checkEpochRecords(t, recs, wantValues("b", half, 1, wantValues("a", half, 0, nil)))
	if hook.n.Load() == 0 {
		t.Fatal("the listed offsets were never validated with OffsetForLeaderEpoch")
	}
}

// TestFranzGroupResumesFromCommittedEpoch: a group consumer commits offsets
// that carry the leader epoch of the records it read; the partitions change
// epoch and the broker restarts; the next consumer of the group validates
// the committed epoch with OffsetForLeaderEpoch, resumes exactly at the
// committed offsets, and commits the new epoch.
func TestFranzGroupResumesFromCommittedEpoch(t *testing.T) {
	const partitions, n = 2, 400
	dir := t.TempDir()
	tb := startTestBroker(t, dir)
	createTopics(t, tb.addr, "resume", partitions)
	produceLabeled(t, tb.addr, "resume", "a", n, partitions)

	first, err := kgo.NewClient(kgo.SeedBrokers(tb.addr), kgo.ConsumerGroup("resumers"), kgo.ConsumeTopics("resume"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	checkEpochRecords(t, consumeN(t, first, n), wantValues("a", n, 0, nil))
	if err := first.CommitUncommittedOffsets(testCtx(t, 30*time.Second)); err != nil {
		t.Fatalf("commit: %v", err)
	}
	first.Close()

	bumpEpochs(t, tb, "resume")
	produceLabeled(t, tb.addr, "resume", "b", n, partitions)
	tb.stop()
	tb = startTestBroker(t, dir)

	committed := fetchCommitted(t, tb.addr, "resumers")
	for p := range int32(partitions) {
		o := committed["resume"][p]
		if o.At != n/partitions || o.LeaderEpoch != 0 {
			t.Fatalf("committed %d: offset %d epoch %d, want %d 0", p, o.At, o.LeaderEpoch, n/partitions)
		}
	}

	hook := &epochRequests{}
	second, err := kgo.NewClient(kgo.SeedBrokers(tb.addr), kgo.ConsumerGroup("resumers"), kgo.ConsumeTopics("resume"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
		kgo.FetchMaxWait(200*time.Millisecond), kgo.WithHooks(hook))
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	checkEpochRecords(t, consumeN(t, second, n), wantValues("b", n, 1, nil))
	if hook.n.Load() == 0 {
		t.Fatal("the committed offsets' epochs were never validated with OffsetForLeaderEpoch")
	}
	if err := second.CommitUncommittedOffsets(testCtx(t, 30*time.Second)); err != nil {
		t.Fatalf("commit: %v", err)
	}
	committed = fetchCommitted(t, tb.addr, "resumers")
	for p := range int32(partitions) {
		o := committed["resume"][p]
		if o.At != n || o.LeaderEpoch != 1 {
			t.Fatalf("committed %d after resuming: offset %d epoch %d, want %d 1", p, o.At, o.LeaderEpoch, n)
		}
	}
}

// fetchCommitted returns a group's committed offsets.
func fetchCommitted(t *testing.T, addr, group string) map[string]map[int32]kadm.Offset {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resps, err := kadm.NewClient(cl).FetchOffsets(testCtx(t, 30*time.Second), group)
	if err == nil {
		err = resps.Error()
	}
	if err != nil {
		t.Fatalf("fetch offsets of %s: %v", group, err)
	}
	return resps.Offsets()
}
