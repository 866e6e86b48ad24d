package main

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sediment-io/sediment/internal/testwait"
)

// TestTxnConfluent (issue 19, test 2): confluent-kafka-go (librdkafka)
// consume-transform-produce. A read_committed group consumer reads topic
// in; a transactional producer writes what it read to out and sends the
// consumer's offsets to the transaction. The first transaction commits:
// its records appear to a librdkafka read_committed reader and the group's
// offset moves. The second aborts: its records never appear, and the
// group's offset stays where the first commit put it.
func TestTxnConfluent(t *testing.T) {
	p := startProc(t, t.TempDir(), "", nil)
	seeds := []string{p.addr}
	createTopics(t, p.addr, "in", 1)
	createTopics(t, p.addr, "out", 1)
	keys := txnKeys(10)
	produceKeys(t, seeds, "in", 1, keys)
	ctx, _ := ctxFor(t, 2*time.Minute)
	const group, txnID = "confluent-txn", "confluent-txn-producer"

	cons, err := kafka.NewConsumer(&kafka.ConfigMap{"bootstrap.servers": p.addr, "broker.address.family": "v4",
		"group.id": group, "isolation.level": "read_committed", "enable.auto.commit": false, "auto.offset.reset": "earliest"})
	must(t, "consumer", err)
	defer cons.Close()
	must(t, "subscribe", cons.Subscribe("in", nil))
	prod, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": p.addr, "broker.address.family": "v4",
		"transactional.id": txnID, "transaction.timeout.ms": 60000})
	must(t, "producer", err)
	defer prod.Close()
	must(t, "init transactions", prod.InitTransactions(ctx))
	adm := kadm.NewClient(newClusterClient(t, seeds))
	defer adm.Close()

	transform := func(prefix string, commit bool) {
		t.Helper()
		read := readConfluentN(t, cons, 5)
		must(t, "begin", prod.BeginTransaction())
		delivered := make(chan kafka.Event, len(read))
		out := "out"
		for _, m := range read {
			must(t, "produce", prod.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &out, Partition: 0},
				Key: m.Key, Value: []byte(prefix + string(m.Key))}, delivered))
		}
		for range read {
			if m := (<-delivered).(*kafka.Message); m.TopicPartition.Error != nil {
				t.Fatalf("delivery: %v", m.TopicPartition.Error)
			}
		}
		md, err := cons.GetConsumerGroupMetadata()
		must(t, "group metadata", err)
		in := "in"
		next := read[len(read)-1].TopicPartition.Offset + 1
		must(t, "send offsets", prod.SendOffsetsToTransaction(ctx, []kafka.TopicPartition{{Topic: &in, Partition: 0, Offset: next}}, md))
		if commit {
			must(t, "commit", prod.CommitTransaction(ctx))
		} else {
			must(t, "abort", prod.AbortTransaction(ctx))
		}
	}
	// EndTxn answers once the outcome is durable as Prepare*; the offsets
	// move when the coordinator completes it.
	transform("committed:", true)
	waitTxnState(t, adm, txnID, "CompleteCommit")
	checkCommittedAt(t, adm, group, "in", 5)
	transform("aborted:", false)
	waitTxnState(t, adm, txnID, "CompleteAbort")
	checkCommittedAt(t, adm, group, "in", 5)

	writeSentinels(t, seeds, "out", 1)
	var want []string
	for _, k := range keys[:5] {
		want = append(want, "committed:"+k)
	}
	if got := readConfluentToSentinel(t, p.addr, "out", "read_committed"); !slices.Equal(got, want) {
		t.Fatalf("read_committed of out: got %v, want %v", got, want)
	}
	if got := readConfluentToSentinel(t, p.addr, "out", "read_uncommitted"); len(got) != 10 {
		t.Fatalf("read_uncommitted of out: got %v, want the 5 committed and the 5 aborted records", got)
	}
}

// readConfluentN reads n messages with cons.
func readConfluentN(t *testing.T, cons *kafka.Consumer, n int) []*kafka.Message {
	t.Helper()
	var out []*kafka.Message
	deadline := time.Now().Add(time.Minute)
	for len(out) < n && time.Now().Before(deadline) {
		m, err := cons.ReadMessage(time.Second)
		if err != nil {
			if kerr, ok := err.(kafka.Error); ok && kerr.IsTimeout() {
				continue
			}
			t.Fatalf("read: %v", err)
		}
		out = append(out, m)
	}
	if len(out) < n {
		t.Fatalf("read %d of %d messages in 1m", len(out), n)
	}
	return out
}

// readConfluentToSentinel reads partition 0 of topic from the start with a
// librdkafka consumer at isolation level, up to the sentinel, and returns
// the values before it.
func readConfluentToSentinel(t *testing.T, addr, topic, isolation string) []string {
	t.Helper()
	cons, err := kafka.NewConsumer(&kafka.ConfigMap{"bootstrap.servers": addr, "broker.address.family": "v4",
		"group.id": "confluent-reader-" + isolation, "isolation.level": isolation, "enable.auto.commit": false})
	must(t, "reader", err)
	defer cons.Close()
	must(t, "assign", cons.Assign([]kafka.TopicPartition{{Topic: &topic, Partition: 0, Offset: kafka.OffsetBeginning}}))
	var out []string
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		m, err := cons.ReadMessage(time.Second)
		if err != nil {
			if kerr, ok := err.(kafka.Error); ok && kerr.IsTimeout() {
				continue
			}
			t.Fatalf("read %s: %v", topic, err)
		}
		if string(m.Value) == sentinelValue {
			return out
		}
		out = append(out, string(m.Value))
	}
	t.Fatalf("no sentinel in %s after 1m (%d records: %v)", topic, len(out), out)
	return nil
}

// waitTxnState waits until the coordinator describes txnID in state.
func waitTxnState(t *testing.T, adm *kadm.Client, txnID, state string) {
	t.Helper()
	ctx, _ := ctxFor(t, time.Minute)
	last := ""
	testwait.Until(t, 30*time.Second, func() bool {
		ds, err := adm.DescribeTransactions(ctx, txnID)
		if err != nil {
			last = err.Error()
			return false
		}
		d, err := ds.On(txnID, nil)
		last = fmt.Sprint(d.State, " ", err)
		return err == nil && d.State == state
	}, "transaction %s is %v, want %s", txnID, testwait.Later(func() string { return last }), state)
}

// checkCommittedAt fails unless group's committed offset of partition 0
// of topic is want.
func checkCommittedAt(t *testing.T, adm *kadm.Client, group, topic string, want int64) {
	t.Helper()
	ctx, _ := ctxFor(t, 30*time.Second)
	got, err := adm.FetchOffsets(ctx, group)
	if err == nil {
		err = got.Error()
	}
	must(t, fmt.Sprint("offsets of ", group), err)
	if c, ok := got.Lookup(topic, 0); !ok || c.At != want {
		t.Fatalf("group %s: %s/0 committed at %d (%v), want %d", group, topic, c.At, ok, want)
	}
}
