package main

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/internal/testwait"
)

// txnProducer is a franz-go transactional producer writing to chosen
// partitions.
func txnProducer(t *testing.T, seeds []string, txnID string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl := newClusterClient(t, seeds, append([]kgo.Opt{kgo.TransactionalID(txnID), kgo.RecordPartitioner(kgo.ManualPartitioner())}, opts...)...)
	t.Cleanup(cl.Close)
	return cl
}

// produceOne writes value to partition p of topic and returns its offset.
func produceOne(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, p int32, value string) int64 {
	t.Helper()
	r, err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Key: []byte(value), Value: []byte(value)}).First()
	if err != nil {
		t.Fatalf("produce %s to %s/%d: %v", value, topic, p, err)
	}
	return r.Offset
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// values returns the records' values in order.
func values(recs []*kgo.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Value)
	}
	return out
}

func checkValues(t *testing.T, what string, recs []*kgo.Record, want ...string) {
	t.Helper()
	if got := values(recs); !slices.Equal(got, want) {
		t.Fatalf("%s:\n got %v\nwant %v", what, got, want)
	}
}

// TestTxnZombieFenced (issue 19, test 3): a producer with the same
// transactional id and a newer epoch fences a zombie in the middle of its
// transaction. The zombie's writes and its EndTxn after the fence are
// refused, and nothing it wrote in its open transaction becomes visible to
// read_committed; the new producer's transaction commits.
func TestTxnZombieFenced(t *testing.T) {
	p := startProc(t, t.TempDir(), "", nil)
	seeds := []string{p.addr}
	ctx, _ := ctxFor(t, 2*time.Minute)
	const topic = "zombie"
	createTopics(t, p.addr, topic, 2)

	zombie := txnProducer(t, seeds, "zombie-txn")
	must(t, "zombie begin", zombie.BeginTransaction())
	produceOne(t, ctx, zombie, topic, 0, "z1")
	produceOne(t, ctx, zombie, topic, 1, "z2")

	zombiePID, zombieEpoch, err := zombie.ProducerID(ctx)
	must(t, "zombie producer id", err)

	fresh := txnProducer(t, seeds, "zombie-txn")
	must(t, "fresh begin", fresh.BeginTransaction())
	produceOne(t, ctx, fresh, topic, 0, "f1") // its InitProducerID fenced the zombie

	_, err = zombie.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: 0, Value: []byte("z3")}).First()
	if err == nil {
		t.Fatal("the fenced zombie's produce was accepted")
	}
	t.Logf("zombie produce after the fence: %v", err)
	// franz-go refuses to commit after a failed produce; the broker must
	// too, whatever a client sends.
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = "zombie-txn", zombiePID, zombieEpoch, true
	resp, err := end.RequestWith(ctx, zombie)
	must(t, "zombie EndTxn", err)
	if code := resp.ErrorCode; code != kerr.ProducerFenced.Code && code != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("the fenced zombie's EndTxn answered %v, want PRODUCER_FENCED or INVALID_PRODUCER_EPOCH", kerr.ErrorForCode(code))
	}
	must(t, "fresh commit", fresh.EndTransaction(ctx, kgo.TryCommit))

	writeSentinels(t, seeds, topic, 2)
	checkValues(t, "read_committed", readToSentinels(t, seeds, topic, 2, kgo.ReadCommitted()), "f1")
	uncommitted := values(readToSentinels(t, seeds, topic, 2, kgo.ReadUncommitted()))
	slices.Sort(uncommitted)
	if want := []string{"f1", "z1", "z2"}; !slices.Equal(uncommitted, want) {
		t.Fatalf("read_uncommitted: got %v, want %v (z3 refused)", uncommitted, want)
	}
}

// TestTxnTimeoutAborted (issue 19, test 5): a transaction left open past
// its transaction.timeout.ms is fenced and aborted by the coordinator's
// sweep: the partition's last stable offset moves on to its end, the
// coordinator describes it CompleteAbort, the producer's late commit is
// refused, and read_committed never sees its records.
func TestTxnTimeoutAborted(t *testing.T) {
	p := startProc(t, t.TempDir(), "", nil)
	seeds := []string{p.addr}
	ctx, _ := ctxFor(t, 2*time.Minute)
	const topic = "slow"
	createTopics(t, p.addr, topic, 1)
	adm := kadm.NewClient(newClusterClient(t, seeds))
	defer adm.Close()

	plain := newClusterClient(t, seeds, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer plain.Close()
	before := produceOne(t, ctx, plain, topic, 0, "before")
	slow := txnProducer(t, seeds, "slow-txn", kgo.TransactionTimeout(2*time.Second))
	must(t, "begin", slow.BeginTransaction())
	first := produceOne(t, ctx, slow, topic, 0, "open1")
	produceOne(t, ctx, slow, topic, 0, "open2")
	if lso := stableOffset(t, ctx, adm, topic); lso != first {
		t.Fatalf("last stable offset %d while the transaction is open, want its first offset %d (after %d)", lso, first, before)
	}
	testwait.Until(t, time.Minute, func() bool {
		return stableOffset(t, ctx, adm, topic) == endOffset0(t, ctx, adm, topic)
	}, "the last stable offset did not reach the end: the timed-out transaction was not aborted")
	// The markers are durable before the coordinator records the abort
	// as complete.
	waitTxnState(t, adm, "slow-txn", "CompleteAbort")
	if err := slow.EndTransaction(ctx, kgo.TryCommit); err == nil {
		t.Fatal("the commit of a transaction aborted for its timeout was accepted")
	}

	writeSentinels(t, seeds, topic, 1)
	checkValues(t, "read_committed", readToSentinels(t, seeds, topic, 1, kgo.ReadCommitted()), "before")
	checkValues(t, "read_uncommitted", readToSentinels(t, seeds, topic, 1, kgo.ReadUncommitted()), "before", "open1", "open2")
}

// stableOffset is partition 0's last stable offset (ListOffsets with
// read_committed).
func stableOffset(t *testing.T, ctx context.Context, adm *kadm.Client, topic string) int64 {
	t.Helper()
	l, err := adm.ListCommittedOffsets(ctx, topic)
	must(t, "list committed offsets", err)
	o, ok := l.Lookup(topic, 0)
	if !ok || o.Err != nil {
		t.Fatalf("last stable offset of %s/0: %v", topic, o.Err)
	}
	return o.Offset
}

// endOffset0 is partition 0's end offset (ListOffsets with
// read_uncommitted).
func endOffset0(t *testing.T, ctx context.Context, adm *kadm.Client, topic string) int64 {
	t.Helper()
	o, ok := listEndOffsets(ctx, t, adm, topic).Lookup(topic, 0)
	if !ok {
		t.Fatalf("no end offset of %s/0", topic)
	}
	return o.Offset
}

// TestTxnInterleavedIsolation (issue 19, test 6): on one partition, a
// transactional producer's committed, aborted and open transactions
// interleave record by record with a non-transactional producer's records.
// read_uncommitted sees every record in log order; read_committed sees the
// same order without the aborted transaction's records, and nothing at or
// past the open transaction's first record until it commits.
func TestTxnInterleavedIsolation(t *testing.T) {
	p := startProc(t, t.TempDir(), "", nil)
	seeds := []string{p.addr}
	ctx, _ := ctxFor(t, 2*time.Minute)
	const topic = "mix"
	createTopics(t, p.addr, topic, 1)
	adm := kadm.NewClient(newClusterClient(t, seeds))
	defer adm.Close()
	txn := txnProducer(t, seeds, "mix-txn")
	plain := newClusterClient(t, seeds, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer plain.Close()

	n := func(v string) { produceOne(t, ctx, plain, topic, 0, v) }
	tx := func(v string) int64 { return produceOne(t, ctx, txn, topic, 0, v) }
	end := func(commit kgo.TransactionEndTry) {
		must(t, fmt.Sprint("end ", commit), txn.EndTransaction(ctx, commit))
	}
	begin := func() { must(t, "begin", txn.BeginTransaction()) }

	n("n1")
	begin()
	tx("t1")
	n("n2")
	tx("t2")
	end(kgo.TryCommit)
	n("n3")
	begin()
	tx("t3")
	n("n4")
	end(kgo.TryAbort)
	n("n5")
	begin()
	tx("t4")
	n("n6")
	end(kgo.TryCommit)
	begin()
	open := tx("t5")
	n("n7")
	writeSentinels(t, seeds, topic, 1)

	checkValues(t, "read_uncommitted", readToSentinels(t, seeds, topic, 1, kgo.ReadUncommitted()),
		"n1", "t1", "n2", "t2", "n3", "t3", "n4", "n5", "t4", "n6", "t5", "n7")
	// The commit before t5 completes after EndTxn answered; from then on
	// the open transaction holds the last stable offset at t5.
	testwait.Until(t, 30*time.Second, func() bool { return stableOffset(t, ctx, adm, topic) == open },
		"last stable offset %v, want the open transaction's first offset %d",
		testwait.Later(func() string { return fmt.Sprint(stableOffset(t, ctx, adm, topic)) }), open)
	stable := []string{"n1", "t1", "n2", "t2", "n3", "n4", "n5", "t4", "n6"}
	checkValues(t, "read_committed below the open transaction", readCommittedN(t, seeds, topic, len(stable)), stable...)

	end(kgo.TryCommit)
	checkValues(t, "read_committed after the commit", readToSentinels(t, seeds, topic, 1, kgo.ReadCommitted()),
		append(stable, "t5", "n7")...)
}

// readCommittedN reads n records of partition 0 with read_committed, then
// polls once more for a second, and returns all it got: more than n is
// data read past the last stable offset.
func readCommittedN(t *testing.T, seeds []string, topic string, n int) []*kgo.Record {
	t.Helper()
	cl := newClusterClient(t, seeds, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(200*time.Millisecond))
	defer cl.Close()
	ctx, _ := ctxFor(t, time.Minute)
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read_committed of %s: %d of %d records after 1m", topic, len(out), n)
		}
		out = append(out, fs.Records()...)
	}
	more, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	return append(out, cl.PollFetches(more).Records()...)
}
