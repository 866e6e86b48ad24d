package bench

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// tsHeader carries the send time (Unix nanoseconds, big-endian) in every
// record, for end-to-end latency. A header rather than the record
// timestamp: the latter has millisecond resolution.
const tsHeader = "bench-ts"

// counters are the live totals of one round, read by the sampler and the
// progress line.
type counters struct {
	produced      atomic.Int64 // acknowledged records
	producedBytes atomic.Int64 // their value bytes
	steady        atomic.Int64 // acknowledged records sent after the warmup
	steadyBytes   atomic.Int64
	produceErrs   atomic.Int64
	consumed      atomic.Int64
	consumedBytes atomic.Int64
	lastAck       atomic.Int64 // Unix ns of the latest acknowledgement (commit, in a transactional workload)
	lastConsumed  atomic.Int64 // Unix ns of the latest record received
	commits       atomic.Int64 // transactions committed
	steadyCommits atomic.Int64 // of which after the warmup
	aborts        atomic.Int64 // transactions whose commit failed

	// uncommitted, in a transactional workload, counts what its
	// read_uncommitted consumers receive (the consume counts above are
	// its read_committed consumers').
	uncommitted *counters

	produceErr firstError
	consumeErr firstError
	// onAck, when set before the producers start, sees every
	// acknowledgement (a failover times the moved partitions with it).
	onAck func(tp topicPartition, sent, at time.Time)
}

// firstError keeps the first error reported.
type firstError struct {
	mu  sync.Mutex // guards err
	err error
}

func (f *firstError) set(err error) {
	f.mu.Lock()
	if f.err == nil {
		f.err = err
	}
	f.mu.Unlock()
}

func (f *firstError) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// producePlan is one producer's share of a produce phase.
type producePlan struct {
	id        int
	topics    []string
	count     int64     // 0: until stopAt
	stopAt    time.Time // zero: until count
	rate      float64   // records/s, 0: as fast as acknowledged
	warmupEnd time.Time
}

// addProduced counts records as produced: at their acknowledgement, or
// at their transaction's commit.
func (c *counters) addProduced(a ackedCounts, at time.Time) {
	c.produced.Add(a.records)
	c.producedBytes.Add(a.bytes)
	c.steady.Add(a.steady)
	c.steadyBytes.Add(a.steadyBytes)
	c.lastAck.Store(at.UnixNano())
}

// drained says whether every consumer has every acknowledged record.
func (c *counters) drained() bool {
	p := c.produced.Load()
	return c.consumed.Load() >= p && (c.uncommitted == nil || c.uncommitted.consumed.Load() >= p)
}

// consumeError is the first fetch error of any consumer.
func (c *counters) consumeError() error {
	if err := c.consumeErr.get(); err != nil || c.uncommitted == nil {
		return err
	}
	return c.uncommitted.consumeErr.get()
}

// producer is one franz-go client producing a workload's records.
type producer struct {
	cl     *kgo.Client
	w      *Workload
	values [][]byte // binary payloads, reused (the client never changes a value)
	c      *counters
	ack    *latencyRecorder
	// txn and commitLat are set for a transactional workload.
	txn       *openTxn
	commitLat *latencyRecorder
}

func newProducer(addr string, w *Workload, c *counters, extra ...kgo.Opt) (*producer, error) {
	opts, err := producerOpts(addr, w)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("bench: producer client: %w", err)
	}
	p := &producer{cl: cl, w: w, c: c, ack: newLatencyRecorder()}
	if w.Transactions != nil {
		p.txn, p.commitLat = &openTxn{spec: w.Transactions}, newLatencyRecorder()
	}
	if w.Payload == "binary" {
		for range 16 {
			p.values = append(p.values, payload(w.MessageSize, w.RandomShare))
		}
	}
	return p, nil
}

func producerOpts(addr string, w *Workload) ([]kgo.Opt, error) {
	codec, err := compressionCodec(w.Compression)
	if err != nil {
		return nil, err
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(seeds(addr)...),
		kgo.ProducerLinger(w.Linger),
		kgo.ProducerBatchMaxBytes(int32(w.BatchSize)),
		kgo.ProducerBatchCompression(codec),
		kgo.MaxBufferedRecords(20000),
		kgo.RecordRetries(20),
	}
	switch w.Acks {
	case "all":
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	case "1":
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	case "0":
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
	}
	switch w.Partitioner {
	case "round-robin":
		opts = append(opts, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	case "random-key":
		opts = append(opts, kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))
	}
	return opts, nil
}

func compressionCodec(name string) (kgo.CompressionCodec, error) {
	switch name {
	case "none", "":
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.CompressionCodec{}, fmt.Errorf("unknown codec %q (want none, gzip, snappy, lz4 or zstd)", name)
}

// run produces the plan's records and waits until every one is
// acknowledged or failed (and, in transactions, committed).
func (p *producer) run(ctx context.Context, plan producePlan) {
	var pace *pacer
	if plan.rate > 0 {
		pace = newPacer(plan.rate)
	}
	for i := int64(0); plan.count == 0 || i < plan.count; i++ {
		if ctx.Err() != nil || (!plan.stopAt.IsZero() && !time.Now().Before(plan.stopAt)) {
			break
		}
		if pace != nil && !pace.wait(ctx, i) {
			break
		}
		if p.txn != nil {
			if err := p.txn.begin(p.cl); err != nil {
				p.c.produceErr.set(fmt.Errorf("bench: producer %d: begin transaction: %w", plan.id, err))
				return
			}
			p.txn.sent++
		}
		r := p.record(plan, i)
		sent := time.Now()
		r.Headers = []kgo.RecordHeader{{Key: tsHeader, Value: binary.BigEndian.AppendUint64(nil, uint64(sent.UnixNano()))}}
		steady := !sent.Before(plan.warmupEnd)
		p.cl.Produce(ctx, r, func(r *kgo.Record, err error) { p.acked(r, err, sent, steady) })
		if p.txn != nil && p.txn.due() && !p.commit(ctx, plan) {
			return
		}
	}
	if p.txn != nil {
		p.commit(ctx, plan) // the last transaction, cut short by the end of the phase
		return
	}
	if err := p.cl.Flush(ctx); err != nil {
		p.c.produceErr.set(fmt.Errorf("bench: producer %d flush: %w", plan.id, err))
	}
}

func (p *producer) acked(r *kgo.Record, err error, sent time.Time, steady bool) {
	if err != nil {
		p.c.produceErrs.Add(1)
		p.c.produceErr.set(fmt.Errorf("bench: produce to %s: %w", r.Topic, err))
		return
	}
	now := time.Now()
	n := int64(len(r.Value))
	if steady {
		p.ack.record(now.Sub(sent))
	}
	if p.txn != nil {
		p.txn.ack(n, steady) // produced once its transaction commits
		return
	}
	a := ackedCounts{records: 1, bytes: n}
	if steady {
		a.steady, a.steadyBytes = 1, n
	}
	p.c.addProduced(a, now)
	if p.c.onAck != nil {
		p.c.onAck(topicPartition{r.Topic, r.Partition}, sent, now)
	}
}

// record builds record i of the plan.
func (p *producer) record(plan producePlan, i int64) *kgo.Record {
	r := &kgo.Record{Topic: plan.topics[(int64(plan.id)+i)%int64(len(plan.topics))]}
	if p.w.Payload == "json" {
		r.Value = jsonPayload(p.w.MessageSize, plan.id, i)
	} else {
		r.Value = p.values[i%int64(len(p.values))]
	}
	if p.w.Partitioner == "random-key" {
		r.Key = make([]byte, 8)
		rand.Read(r.Key)
	}
	return r
}

func (p *producer) close() { p.cl.Close() }

// payload returns size bytes of which the first share are random and the
// rest zeros, so that a codec compresses them as much as the workload says.
func payload(size int, share float64) []byte {
	b := make([]byte, size)
	rand.Read(b[:int(float64(size)*share)])
	return b
}

// jsonPayload is a JSON object of exactly size bytes (size >= 48):
// {"producer":P,"seq":N,"pad":"xxx..."}.
func jsonPayload(size, producer int, seq int64) []byte {
	b := make([]byte, 0, size)
	b = append(b, `{"producer":`...)
	b = strconv.AppendInt(b, int64(producer), 10)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"pad":"`...)
	for len(b) < size-2 {
		b = append(b, 'a'+byte(len(b)%26))
	}
	return append(b, `"}`...)
}

// pacer spaces records to a fixed rate measured from the start, so that a
// late record is caught up rather than lost (a ticker drops ticks).
type pacer struct {
	start time.Time
	rate  float64
}

func newPacer(rate float64) *pacer { return &pacer{start: time.Now(), rate: rate} }

// wait returns when record i is due; false when ctx ended first.
func (p *pacer) wait(ctx context.Context, i int64) bool {
	due := p.start.Add(time.Duration(float64(i) / p.rate * float64(time.Second)))
	d := time.Until(due)
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
