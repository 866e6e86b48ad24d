package protocol

import (
	"crypto/rand"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestInflightBudget: with a 1 MiB budget for request bytes held at once,
// four producers sending requests of up to 1 MiB each at the same time
// wait for each other instead of all being read; a request larger than the
// whole budget still goes through (it takes all of it); every record is
// acknowledged and read back, and the budget is all given back.
func TestInflightBudget(t *testing.T) {
	t.Parallel()
	b := startBroker(t, func(s *brokerSetup) { s.cfg.MaxInflightBytes = 1 << 20 })
	b.createTopic("budget", 4, map[string]string{"max.message.bytes": "4000000"})
	ctx := franzCtx(t)
	const perProducer = 24
	values := map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for p := range int32(4) {
		cl, _ := franzClient(t, b, kgo.DefaultProduceTopic("budget"), kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.ProducerLinger(20*time.Millisecond), kgo.ProducerBatchMaxBytes(3<<20), kgo.ProducerBatchCompression(kgo.NoCompression()))
		wg.Go(func() {
			var recs []*kgo.Record
			for i := range perProducer {
				size := 200 << 10
				if p == 0 && i == 0 {
					size = 2 << 20 // alone larger than the budget
				}
				v := make([]byte, size)
				rand.Read(v)
				mu.Lock()
				values[string(v)] = true
				mu.Unlock()
				recs = append(recs, &kgo.Record{Partition: p, Value: v})
			}
			if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				t.Errorf("producer %d: %v", p, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if waits := metricValue(t, b.srv.m.inflightWaits); waits == 0 {
		t.Errorf("no request waited for the 1 MiB budget, want some")
	}
	if held := metricValue(t, b.srv.m.inflightBytes); held != 0 {
		t.Errorf("%v bytes of budget still held after every answer", held)
	}

	consumer, _ := franzClient(t, b, kgo.ConsumeTopics("budget"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxPartitionBytes(4<<20))
	for got := 0; got < 4*perProducer; {
		fs := consumer.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("after %d records: %v", got, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got++
			if !values[string(r.Value)] {
				t.Fatalf("record %d/%d (%d bytes) was never produced", r.Partition, r.Offset, len(r.Value))
			}
			delete(values, string(r.Value))
		})
	}
	if len(values) != 0 {
		t.Fatalf("%d records not read back", len(values))
	}
}

// TestInflightBudgetLetsSmallRequestsThrough: while producers hold the
// whole budget, small requests (metadata, fetches, heartbeats) are still
// read and answered; a large produce waits until the budget is free.
func TestInflightBudgetLetsSmallRequestsThrough(t *testing.T) {
	t.Parallel()
	b := startBroker(t, func(s *brokerSetup) { s.cfg.MaxInflightBytes = 1 << 20 })
	b.createTopic("small", 1, nil)
	ctx := franzCtx(t)
	if err := b.srv.inflight.Acquire(ctx, 1<<20); err != nil { // as if producers held it all
		t.Fatal(err)
	}
	cl, adm := franzClient(t, b, kgo.DefaultProduceTopic("small"), kgo.ProducerLinger(0),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if _, err := adm.ListEndOffsets(ctx, "small"); err != nil {
		t.Fatalf("metadata and list offsets with the budget taken: %v", err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("small")}).FirstErr(); err != nil {
		t.Fatalf("small produce with the budget taken: %v", err)
	}
	big := make(chan error, 1)
	value := make([]byte, 200<<10)
	rand.Read(value)
	go func() {
		big <- cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr()
	}()
	for metricValue(t, b.srv.m.inflightWaits) == 0 { // bounded by ctx: fails below if it never waits
		if ctx.Err() != nil {
			t.Fatal("the 200 KiB produce never waited for the budget")
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.srv.inflight.Release(1 << 20)
	if err := <-big; err != nil {
		t.Fatalf("large produce after the budget was freed: %v", err)
	}
}

// metricValue reads a counter or gauge.
func metricValue(t *testing.T, m prometheus.Metric) float64 {
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	if out.Counter != nil {
		return out.Counter.GetValue()
	}
	return out.Gauge.GetValue()
}
