package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// topicPartition names one partition.
type topicPartition struct {
	topic     string
	partition int32
}

// assign deals partitions to n consumers in turn. Consumers are assigned
// partitions directly rather than joining a group, so that no rebalance
// pauses or re-reads records inside a measurement.
func assign(topics []string, partitions, n int) [][]topicPartition {
	out := make([][]topicPartition, n)
	i := 0
	for _, t := range topics {
		for p := range partitions {
			out[i%n] = append(out[i%n], topicPartition{t, int32(p)})
			i++
		}
	}
	return out
}

// consumer is one franz-go client reading its partitions from the start.
type consumer struct {
	cl        *kgo.Client
	c         *counters
	e2e       *latencyRecorder
	warmupEnd time.Time
	// uncommitted is set on a transactional workload's read_uncommitted
	// consumers (the others read committed records only).
	uncommitted bool
}

// newConsumer reads parts into c, with read_committed isolation in a
// transactional workload unless uncommitted.
func newConsumer(addr string, parts []topicPartition, c *counters, warmupEnd time.Time, w *Workload, uncommitted bool) (*consumer, error) {
	assignment := map[string]map[int32]kgo.Offset{}
	for _, tp := range parts {
		if assignment[tp.topic] == nil {
			assignment[tp.topic] = map[int32]kgo.Offset{}
		}
		assignment[tp.topic][tp.partition] = kgo.NewOffset().AtStart()
	}
	opts := []kgo.Opt{kgo.SeedBrokers(seeds(addr)...), kgo.ConsumePartitions(assignment),
		kgo.FetchMaxWait(500 * time.Millisecond), kgo.FetchMaxBytes(64 << 20), kgo.FetchMaxPartitionBytes(8 << 20)}
	if w.Transactions != nil && !uncommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("bench: consumer client: %w", err)
	}
	return &consumer{cl: cl, c: c, e2e: newLatencyRecorder(), warmupEnd: warmupEnd, uncommitted: uncommitted}, nil
}

// run polls until ctx ends, counting records and their end-to-end latency
// (send time in the record header to the poll's return).
func (k *consumer) run(ctx context.Context) {
	warm := k.warmupEnd.UnixNano()
	for ctx.Err() == nil {
		fs := k.cl.PollFetches(ctx)
		now := time.Now()
		fs.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				k.c.consumeErr.set(fmt.Errorf("bench: fetch %s/%d: %w", t, p, err))
			}
		})
		var n, bytes int64
		fs.EachRecord(func(r *kgo.Record) {
			n++
			bytes += int64(len(r.Value))
			if sent, ok := sentAt(r); ok && sent >= warm {
				k.e2e.record(time.Duration(now.UnixNano() - sent))
			}
		})
		if n > 0 {
			k.c.consumed.Add(n)
			k.c.consumedBytes.Add(bytes)
			k.c.lastConsumed.Store(now.UnixNano())
		}
	}
}

// sentAt reads the send time a producer put in the record.
func sentAt(r *kgo.Record) (int64, bool) {
	for _, h := range r.Headers {
		if h.Key == tsHeader && len(h.Value) == 8 {
			return int64(binary.BigEndian.Uint64(h.Value)), true
		}
	}
	return 0, false
}

func (k *consumer) close() { k.cl.Close() }
