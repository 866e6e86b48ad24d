package main

import (
	"errors"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// readConfluent reads n messages with c, failing on any consumer error.
func readConfluent(t *testing.T, c *kafka.Consumer, n int) []*kafka.Message {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var out []*kafka.Message
	for len(out) < n {
		if time.Now().After(deadline) {
			t.Fatalf("read %d of %d messages", len(out), n)
		}
		m, err := c.ReadMessage(time.Second)
		var kerr kafka.Error
		if errors.As(err, &kerr) && kerr.Code() == kafka.ErrTimedOut {
			continue
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		out = append(out, m)
	}
	return out
}

// checkConfluentEpochs asserts msgs are exactly want's values, each once,
// with the leader epoch want gives.
func checkConfluentEpochs(t *testing.T, msgs []*kafka.Message, want map[string]int32) {
	t.Helper()
	for _, m := range msgs {
		epoch, ok := want[string(m.Value)]
		if !ok {
			t.Fatalf("unexpected or repeated message %q at offset %v", m.Value, m.TopicPartition.Offset)
		}
		delete(want, string(m.Value))
		if got := m.TopicPartition.LeaderEpoch; got == nil || *got != epoch {
			t.Errorf("message %q: leader epoch %v, want %d", m.Value, got, epoch)
		}
	}
	if len(want) > 0 {
		t.Fatalf("%d messages never read", len(want))
	}
}

// TestConfluentGroupResumesAcrossEpochs: librdkafka commits the leader
// epoch of what it read, and after the partition changes epoch a new member
// of the group resumes at the committed offset (librdkafka validates it
// with OffsetForLeaderEpoch) and reads the new epoch's records.
func TestConfluentGroupResumesAcrossEpochs(t *testing.T) {
	const n = 100
	tb := startTestBroker(t, "")
	createTopics(t, tb.addr, "rdk", 1)
	produceLabeled(t, tb.addr, "rdk", "a", n, 1)
	member := func(name string) (*kafka.Consumer, *rdkafkaLog) {
		cfg := confluentConsumerConfig(tb.addr)
		cfg.SetKey("group.id", "rdk-group")
		cfg.SetKey("client.id", name)
		c, err := kafka.NewConsumer(cfg)
		if err != nil {
			t.Fatal(err)
		}
		logs := collectRdkafkaLog(c.Logs())
		if err := c.Subscribe("rdk", nil); err != nil {
			t.Fatal(err)
		}
		return c, logs
	}
	first, firstLog := member("first")
	checkConfluentEpochs(t, readConfluent(t, first, n), wantValues("a", n, 0, nil))
	if _, err := first.Commit(); err != nil {
		t.Fatalf("commit: %v", err)
	}
	first.Close()
	firstLog.checkNoErrors(t, "first member")

	bumpEpochs(t, tb, "rdk")
	produceLabeled(t, tb.addr, "rdk", "b", n, 1)
	if o := fetchCommitted(t, tb.addr, "rdk-group")["rdk"][0]; o.At != n || o.LeaderEpoch != 0 {
		t.Fatalf("committed by librdkafka: offset %d epoch %d, want %d 0", o.At, o.LeaderEpoch, n)
	}
	second, secondLog := member("second")
	checkConfluentEpochs(t, readConfluent(t, second, n), wantValues("b", n, 1, nil))
	if _, err := second.Commit(); err != nil {
		t.Fatalf("commit: %v", err)
	}
	second.Close()
	secondLog.checkNoErrors(t, "second member")
	if o := fetchCommitted(t, tb.addr, "rdk-group")["rdk"][0]; o.At != 2*n || o.LeaderEpoch != 1 {
		t.Fatalf("committed after resuming: offset %d epoch %d, want %d 1", o.At, o.LeaderEpoch, 2*n)
	}
}
