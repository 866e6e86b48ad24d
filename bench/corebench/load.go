package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func createTopic(ctx context.Context, addr, topic string, partitions int32) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	return err
}

// throughput runs producers that each produce size-byte records to topic
// as fast as they are acknowledged, for d, and returns acknowledged bytes/s
// and records.
func throughput(ctx context.Context, addr, topic string, producers, size int, d time.Duration) (float64, int64, error) {
	var acked atomic.Int64
	var firstErr atomic.Value
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for range producers {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
			kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(5*time.Millisecond),
			kgo.MaxBufferedRecords(20000), kgo.ProducerBatchCompression(kgo.NoCompression()))
		if err != nil {
			return 0, 0, err
		}
		defer cl.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			value := randomBytes(size)
			for ctx.Err() == nil {
				cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
					if err == nil {
						acked.Add(1)
					} else if ctx.Err() == nil {
						firstErr.CompareAndSwap(nil, err)
					}
				})
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if e := firstErr.Load(); e != nil {
		return 0, 0, fmt.Errorf("produce: %v", e)
	}
	return float64(acked.Load()) * float64(size) / elapsed.Seconds(), acked.Load(), nil
}

// latency produces rate records/s (value: the send time) to topic while a
// consumer reads them, and returns end-to-end latencies (produce call to
// consumer poll return) and produce-ack latencies (produce call to the
// acknowledgement).
func latency(ctx context.Context, addr, topic string, rate int, d time.Duration) (e2e, ack []time.Duration, err error) {
	cons, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()), kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		return nil, nil, err
	}
	defer cons.Close()
	prod, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return nil, nil, err
	}
	defer prod.Close()
	// Let the consumer find its position (the end) before timing starts.
	warm, cancelWarm := context.WithTimeout(ctx, 2*time.Second)
	cons.PollRecords(warm, 1)
	cancelWarm()
	n := int(d.Seconds() * float64(rate))
	lat := make(chan time.Duration, n)
	rctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
	defer cancel()
	go consumeLatency(rctx, cons, n, lat)
	value := randomBytes(1024)
	acks := make(chan time.Duration, n)
	pace := newPacer(rate)
	for i := 0; i < n && rctx.Err() == nil; i++ {
		pace.wait(i)
		v := append([]byte(nil), value...)
		sent := time.Now()
		binary.BigEndian.PutUint64(v, uint64(sent.UnixNano()))
		prod.Produce(rctx, &kgo.Record{Value: v}, func(_ *kgo.Record, err error) {
			if err == nil {
				acks <- time.Since(sent)
			}
		})
	}
	for len(e2e) < n {
		select {
		case l := <-lat:
			e2e = append(e2e, l)
		case <-rctx.Done():
			return e2e, ack, fmt.Errorf("latency: received %d of %d records", len(e2e), n)
		}
	}
	prod.Flush(rctx)
	for len(acks) > 0 {
		ack = append(ack, <-acks)
	}
	return e2e, ack, nil
}

func consumeLatency(ctx context.Context, cl *kgo.Client, n int, out chan<- time.Duration) {
	for got := 0; got < n && ctx.Err() == nil; {
		fs := cl.PollFetches(ctx)
		now := time.Now().UnixNano()
		fs.EachRecord(func(r *kgo.Record) {
			out <- time.Duration(now - int64(binary.BigEndian.Uint64(r.Value)))
			got++
		})
	}
}

// randomBytes returns incompressible bytes, so that no codec flatters a
// throughput figure.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// percentile returns the p-th percentile (0..100) of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p / 100 * float64(len(sorted)-1))
	return sorted[i]
}

func sortDurations(d []time.Duration) { sort.Slice(d, func(i, j int) bool { return d[i] < d[j] }) }

// produceAtRate produces rate records/s of 1 KiB for d, each record to the
// next partition in turn, and waits for every acknowledgement.
func produceAtRate(ctx context.Context, addr, topic string, rate int, d time.Duration) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return err
	}
	defer cl.Close()
	value := randomBytes(1024)
	var firstErr atomic.Value
	pace := newPacer(rate)
	for i := 0; i < int(d.Seconds()*float64(rate)); i++ {
		pace.wait(i)
		cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				firstErr.CompareAndSwap(nil, err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	if e := firstErr.Load(); e != nil {
		return e.(error)
	}
	return nil
}

// pacer spaces records to a fixed rate measured from the start, so that a
// late tick is caught up rather than lost (a ticker drops ticks, and a
// 200 µs ticker cannot keep 5,000/s).
type pacer struct {
	start time.Time
	rate  float64
}

func newPacer(rate int) *pacer { return &pacer{start: time.Now(), rate: float64(rate)} }

// wait returns when record i is due.
func (p *pacer) wait(i int) {
	due := p.start.Add(time.Duration(float64(i) / p.rate * float64(time.Second)))
	if d := time.Until(due); d > 0 {
		time.Sleep(d)
	}
}
