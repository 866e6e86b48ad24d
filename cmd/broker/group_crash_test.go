package main

// Consumer groups of sarama and of confluent-kafka-go (librdkafka) across a
// broker SIGKILL: offsets committed before the kill are there after the
// restart, the group too (the live consumer keeps its member id and goes on
// where it was), and a fresh consumer of the group starts exactly at the
// committed offsets.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// seenLog counts what a consumer received, per partition and offset.
type seenLog struct {
	mu   sync.Mutex // guards seen
	seen map[int32]map[int64]int
}

func newSeenLog() *seenLog { return &seenLog{seen: map[int32]map[int64]int{}} }

func (s *seenLog) add(p int32, o int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[p] == nil {
		s.seen[p] = map[int64]int{}
	}
	s.seen[p][o]++
}

// covers says whether every offset in [from, end) of every partition was
// seen.
func (s *seenLog) covers(partitions int32, from, end int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range partitions {
		for o := from; o < end; o++ {
			if s.seen[p][o] == 0 {
				return false
			}
		}
	}
	return true
}

// lowest returns the lowest offset of partition p that was seen, -1 when
// none was.
func (s *seenLog) lowest(p int32) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	low := int64(-1)
	for o := range s.seen[p] {
		if low < 0 || o < low {
			low = o
		}
	}
	return low
}

// groupClient starts a consumer of a group that records what it receives
// and commits it; the returned function stops it (closing the client).
type groupClient func(t *testing.T, addr, group, topic string, seen *seenLog) (stop func())

func TestGroupCommitsSurviveBrokerCrash(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start groupClient
	}{
		{"sarama", startSaramaGroup},
		{"confluent", startConfluentGroup},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			p := startProc(t, dir, "", nil)
			setBrokerConfigs(t, p.addr, quickGroups...)
			const partitions = 3
			topic, group := "crash-"+tc.name, "resume-"+tc.name
			createTopics(t, p.addr, topic, partitions)
			produceEven(t, p.addr, topic, partitions, 100)
			seen := newSeenLog()
			stop := tc.start(t, p.addr, group, topic, seen)
			waitFor(t, "the first 100 records of each partition to be consumed and committed", func() bool {
				return seen.covers(partitions, 0, 100) && committedAt(t, p.addr, group, topic, partitions) == "100,100,100"
			})

			members := groupMemberIDs(t, p.addr, group)
			p.kill()
			p = startProc(t, dir, p.addr, nil)
			if got := committedAt(t, p.addr, group, topic, partitions); got != "100,100,100" {
				t.Fatalf("committed offsets after the crash: %s, want 100,100,100", got)
			}
			produceEven(t, p.addr, topic, partitions, 100)
			waitFor(t, "the live consumer to consume and commit what was produced after the restart", func() bool {
				return seen.covers(partitions, 0, 200) && committedAt(t, p.addr, group, topic, partitions) == "200,200,200"
			})
			if got := groupMemberIDs(t, p.addr, group); got != members {
				t.Fatalf("group members %s after the crash, %s before: the group was lost", got, members)
			}
			stop()

			fresh := newSeenLog()
			produceEven(t, p.addr, topic, partitions, 10)
			stop = tc.start(t, p.addr, group, topic, fresh)
			defer stop()
			waitFor(t, "a fresh consumer to consume and commit up to the end of the log", func() bool {
				return fresh.covers(partitions, 209, 210) && committedAt(t, p.addr, group, topic, partitions) == "210,210,210"
			})
			for part := range int32(partitions) {
				if o := fresh.lowest(part); o != 200 {
					t.Fatalf("a fresh consumer started partition %d at offset %d, want exactly the committed 200", part, o)
				}
			}
			if !fresh.covers(partitions, 200, 210) {
				t.Fatal("a fresh consumer skipped offsets between the committed 200 and the end of the log")
			}
		})
	}
}

// groupMemberIDs returns the member ids of a group, comma-separated.
func groupMemberIDs(t *testing.T, addr, group string) string {
	t.Helper()
	ctx, _ := ctxFor(t, 30*time.Second)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	described, err := kadm.NewClient(cl).DescribeGroups(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range described[group].Members {
		ids = append(ids, m.MemberID)
	}
	sort.Strings(ids)
	return strings.Join(ids, ",")
}

// committedAt returns the group's committed offsets of partitions 0..n-1,
// comma-separated ("-" for none).
func committedAt(t *testing.T, addr, group, topic string, n int32) string {
	t.Helper()
	ctx, _ := ctxFor(t, 30*time.Second)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	offsets, err := kadm.NewClient(cl).FetchOffsets(ctx, group)
	if err != nil {
		return err.Error()
	}
	out := ""
	for p := range n {
		if p > 0 {
			out += ","
		}
		if o, ok := offsets.Lookup(topic, p); ok && o.Err == nil {
			out += fmt.Sprint(o.At)
		} else {
			out += "-"
		}
	}
	return out
}

// saramaHandler records and marks every message; sarama commits marked
// offsets every AutoCommit.Interval.
type saramaHandler struct{ seen *seenLog }

func (saramaHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h saramaHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for {
		select {
		case m, ok := <-claim.Messages():
			if !ok {
				return nil
			}
			h.seen.add(m.Partition, m.Offset)
			sess.MarkMessage(m, "")
		case <-sess.Context().Done():
			return nil
		}
	}
}

func startSaramaGroup(t *testing.T, addr, group, topic string, seen *seenLog) func() {
	t.Helper()
	cfg := saramaConfig(t)
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Interval = 100 * time.Millisecond
	cfg.Consumer.Group.Session.Timeout = 30 * time.Second // outlives the broker's restart
	cfg.Consumer.Group.Heartbeat.Interval = 200 * time.Millisecond
	g, err := sarama.NewConsumerGroup([]string{addr}, group, cfg)
	if err != nil {
		t.Fatalf("sarama consumer group: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for range g.Errors() { // the broker's death surfaces here; sarama retries
		}
	}()
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			if err := g.Consume(ctx, []string{topic}, saramaHandler{seen}); err != nil && ctx.Err() == nil {
				time.Sleep(100 * time.Millisecond)
			}
		}
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			g.Close()
			wg.Wait()
		})
	}
	t.Cleanup(stop)
	return stop
}

func startConfluentGroup(t *testing.T, addr, group, topic string, seen *seenLog) func() {
	t.Helper()
	c, err := kafka.NewConsumer(&kafka.ConfigMap{
		"bootstrap.servers": addr, "broker.address.family": "v4", "client.id": "sediment-confluent-group",
		"group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": true, "auto.commit.interval.ms": 100,
		"session.timeout.ms": 30000, "heartbeat.interval.ms": 200, "go.logs.channel.enable": true,
	})
	if err != nil {
		t.Fatalf("consumer: %v", err)
	}
	go func() {
		for range c.Logs() { // the broker's death is logged; librdkafka retries
		}
	}()
	if err := c.Subscribe(topic, nil); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			default:
			}
			if m, ok := c.Poll(100).(*kafka.Message); ok && m.TopicPartition.Error == nil {
				seen.add(m.TopicPartition.Partition, int64(m.TopicPartition.Offset))
			}
		}
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			close(quit)
			<-done
			c.Close()
		})
	}
	t.Cleanup(stop)
	return stop
}
