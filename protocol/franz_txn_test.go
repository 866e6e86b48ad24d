package protocol

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/internal/testwait"
)

// consumeUntil polls cl until it has a record with key "end" and returns
// the keys before it, in order per partition and partitions in order.
func consumeUntil(t *testing.T, ctx context.Context, cl *kgo.Client) []string {
	t.Helper()
	byPart := map[int32][]string{}
	done := false
	testwait.Until(t, ioBound, func() bool {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil && ctx.Err() == nil {
			t.Fatalf("poll: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Key) == "end" {
				done = true
				return
			}
			byPart[r.Partition] = append(byPart[r.Partition], string(r.Key))
		})
		return done
	}, "no end record consumed")
	var out []string
	for _, p := range slices.Sorted(maps.Keys(byPart)) {
		out = append(out, byPart[p]...)
	}
	return out
}

// TestFranzTransactions: a franz-go transactional producer commits and
// aborts transactions; a read_committed consumer sees exactly the
// committed records, a read_uncommitted one every record.
func TestFranzTransactions(t *testing.T) {
	t.Parallel()
	b := startGroupBroker(t)
	b.createTopic("eos", 1, nil)
	ctx := franzCtx(t)
	prod, _ := franzClient(t, b, kgo.TransactionalID("franz-txn"), kgo.DefaultProduceTopic("eos"))
	var want, all []string
	for round, commit := range []bool{true, false, true, false, true} {
		if err := prod.BeginTransaction(); err != nil {
			t.Fatalf("begin %d: %v", round, err)
		}
		var recs []*kgo.Record
		for i := range 5 {
			key := fmt.Sprintf("r%d-%d", round, i)
			recs = append(recs, &kgo.Record{Key: []byte(key), Value: []byte("v")})
			all = append(all, key)
			if commit {
				want = append(want, key)
			}
		}
		if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", round, err)
		}
		if err := prod.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatalf("end %d (commit %v): %v", round, commit, err)
		}
	}
	if err := prod.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte("end")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := prod.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}

	committed, _ := franzClient(t, b, kgo.ConsumeTopics("eos"), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if got := consumeUntil(t, ctx, committed); !slices.Equal(got, want) {
		t.Fatalf("read_committed consumed %v, want %v", got, want)
	}
	uncommitted, _ := franzClient(t, b, kgo.ConsumeTopics("eos"), kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	if got := consumeUntil(t, ctx, uncommitted); !slices.Equal(got, all) {
		t.Fatalf("read_uncommitted consumed %v, want %v", got, all)
	}
}

// TestFranzGroupTransactSession: a franz-go GroupTransactSession reads a
// topic read_committed, writes each record to another in transactions that
// commit the consumed offsets; one transaction aborts, and its records are
// read and written again. Downstream every key appears exactly once, and
// the group's committed offsets are at the end of the input.
func TestFranzGroupTransactSession(t *testing.T) {
	t.Parallel()
	b := startGroupBroker(t)
	b.createTopic("in", 2, nil)
	b.createTopic("out", 1, nil)
	ctx := franzCtx(t)
	src, _ := franzClient(t, b, kgo.DefaultProduceTopic("in"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var keys []string
	for i := range 40 {
		key := fmt.Sprintf("k%02d", i)
		keys = append(keys, key)
		if err := src.ProduceSync(ctx, &kgo.Record{Key: []byte(key), Partition: int32(i % 2)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	sess, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(b.addr), kgo.WithLogger(nil),
		kgo.TransactionalID("etl"), kgo.ConsumerGroup("etl-group"), kgo.ConsumeTopics("in"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.DefaultProduceTopic("out"),
		kgo.RequireStableFetchOffsets())
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	moved, aborted := 0, false
	for round := 0; moved < len(keys) && round < 200; round++ {
		fs := sess.PollRecords(ctx, 7)
		if err := fs.Err0(); err != nil {
			t.Fatalf("poll: %v", err)
		}
		if err := sess.Begin(); err != nil {
			t.Fatalf("begin: %v", err)
		}
		var out []*kgo.Record
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, &kgo.Record{Key: r.Key, Value: []byte(strings.ToUpper(string(r.Key)))})
		})
		if err := sess.ProduceSync(ctx, out...).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
		commit := kgo.TryCommit
		if !aborted && len(out) > 0 {
			commit, aborted = kgo.TryAbort, true // once: these records must come again
		}
		committed, err := sess.End(ctx, commit)
		if err != nil {
			t.Fatalf("end: %v", err)
		}
		if committed {
			moved += len(out)
		}
	}
	if moved != len(keys) {
		t.Fatalf("moved %d records, want %d", moved, len(keys))
	}
	if err := src.ProduceSync(ctx, &kgo.Record{Topic: "out", Key: []byte("end")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	reader, _ := franzClient(t, b, kgo.ConsumeTopics("out"), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	got := consumeUntil(t, ctx, reader)
	slices.Sort(got)
	if !slices.Equal(got, keys) {
		t.Fatalf("downstream keys %v, want each of %v once", got, keys)
	}
	// The group's offsets are completed after the markers: wait for them.
	c := b.dial()
	var offsets string
	testwait.Until(t, ioBound, func() bool {
		offsets = fetchStable(t, c, "etl-group", "in", 0, 1)
		return offsets == "20,20"
	}, "group offsets %s, want 20,20", testwait.Later(func() string { return offsets }))
}

// TestFranzInterleavedIsolation: transactions (committed and aborted)
// interleave with a plain producer on one partition; record by record, the
// read_committed consumer sees the read_uncommitted sequence without the
// aborted transactions' records.
func TestFranzInterleavedIsolation(t *testing.T) {
	t.Parallel()
	b := startGroupBroker(t)
	b.createTopic("mix", 1, nil)
	ctx := franzCtx(t)
	txnl, _ := franzClient(t, b, kgo.TransactionalID("mixer"), kgo.DefaultProduceTopic("mix"))
	plain, _ := franzClient(t, b, kgo.DefaultProduceTopic("mix"))
	aborted := map[string]bool{}
	errs := make(chan error, 2)
	go func() {
		for i := range 10 {
			if err := txnl.BeginTransaction(); err != nil {
				errs <- err
				return
			}
			for j := range 3 {
				key := fmt.Sprintf("t%d-%d", i, j)
				if i%3 == 1 {
					aborted[key] = true
				}
				if err := txnl.ProduceSync(ctx, &kgo.Record{Key: []byte(key)}).FirstErr(); err != nil {
					errs <- err
					return
				}
			}
			if err := txnl.EndTransaction(ctx, kgo.TransactionEndTry(i%3 != 1)); err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}()
	go func() {
		for k := range 30 {
			if err := plain.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprintf("p%d", k))}).FirstErr(); err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	if err := plain.ProduceSync(ctx, &kgo.Record{Key: []byte("end")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	rc, _ := franzClient(t, b, kgo.ConsumeTopics("mix"), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	ru, _ := franzClient(t, b, kgo.ConsumeTopics("mix"), kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	all := consumeUntil(t, ctx, ru)
	want := slices.DeleteFunc(slices.Clone(all), func(k string) bool { return aborted[k] })
	if len(all) != 60 || len(want) != 51 {
		t.Fatalf("read_uncommitted consumed %d records (%d not aborted), want 60 (51)", len(all), len(want))
	}
	if got := consumeUntil(t, ctx, rc); !slices.Equal(got, want) {
		t.Fatalf("read_committed consumed\n%v\nwant\n%v", got, want)
	}
}

// TestKadmTransactions drives the transaction admin APIs through kadm, the
// client of the broker's own `transactions` and `producers` subcommands:
// a hanging transaction is found with ListTransactions,
// DescribeTransactions and DescribeProducers, and aborted with
// WriteTxnMarkers, which moves the partition's last stable offset on.
func TestKadmTransactions(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("adm", 1, nil)
	ctx := franzCtx(t)
	prod, _ := franzClient(t, b, kgo.TransactionalID("hanging-kadm"), kgo.DefaultProduceTopic("adm"))
	_, adm := franzClient(t, b)
	if err := prod.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte("left open")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	listed, err := adm.ListTransactions(ctx, nil, []string{"Ongoing"})
	if err != nil || len(listed) != 1 || listed["hanging-kadm"].State != "Ongoing" {
		t.Fatalf("list: %v %+v", err, listed)
	}
	described, err := adm.DescribeTransactions(ctx, "hanging-kadm")
	if err != nil {
		t.Fatal(err)
	}
	d := described["hanging-kadm"]
	if d.Err != nil || d.State != "Ongoing" || d.ProducerID != listed["hanging-kadm"].ProducerID || len(d.Topics["adm"]) != 1 {
		t.Fatalf("describe: %+v", d)
	}
	producers, err := adm.DescribeProducers(ctx, kadm.TopicsSet{"adm": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	var open []kadm.DescribedProducer
	producers.EachProducer(func(p kadm.DescribedProducer) {
		if p.CurrentTxnStartOffset >= 0 {
			open = append(open, p)
		}
	})
	if len(open) != 1 || open[0].ProducerID != d.ProducerID || open[0].CurrentTxnStartOffset != 0 {
		t.Fatalf("producers with an open transaction: %+v", open)
	}

	res, err := adm.WriteTxnMarkers(ctx, kadm.TxnMarkers{ProducerID: open[0].ProducerID, ProducerEpoch: open[0].ProducerEpoch,
		Commit: false, CoordinatorEpoch: open[0].CoordinatorEpoch, Topics: kadm.TopicsSet{"adm": {0: {}}}})
	if err != nil {
		t.Fatal(err)
	}
	res.EachPartition(func(p kadm.TxnMarkersPartitionResponse) {
		if p.Err != nil {
			t.Fatalf("abort marker for %s-%d: %v", p.Topic, p.Partition, p.Err)
		}
	})
	var lso int64
	c := b.dial()
	testwait.Until(t, ioBound, func() bool {
		lso = c.fetchIsolated("adm", 0, 0, readCommitted).LastStableOffset
		return lso == 2
	}, "LSO %s after the operator's abort, want 2", testwait.Later(func() string { return fmt.Sprint(lso) }))
}
