package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestFranzSmoke(t *testing.T) {
	tb := startTestBroker(t, "")
	ctx := testCtx(t, 60*time.Second)
	cl, err := kgo.NewClient(kgo.SeedBrokers(tb.addr), kgo.AllowAutoTopicCreation(), kgo.DefaultProduceTopic("smoke"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for i := range 100 {
		recs = append(recs, &kgo.Record{Value: []byte(fmt.Sprintf("v%d", i))})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	parts := readTopic(t, tb.addr, "smoke")
	if len(parts[0]) != 100 {
		t.Fatalf("read %d records", len(parts[0]))
	}
	for i, r := range parts[0] {
		if want := fmt.Sprintf("v%d", i); string(r.Value) != want {
			t.Fatalf("offset %d: %q want %q", i, r.Value, want)
		}
	}
}

// payload is record i's 1 KiB value: its index, then bytes derived from it,
// so any corruption or misplacement is detected.
func payload(i int) []byte {
	v := make([]byte, 1024)
	binary.BigEndian.PutUint64(v, uint64(i))
	r := rand.New(rand.NewPCG(uint64(i), 7))
	for j := 8; j < len(v); j += 8 {
		binary.BigEndian.PutUint64(v[j:], r.Uint64())
	}
	return v
}

// TestFranz200k: 200,000 records of 1 KiB over 8 partitions with acks=all
// (franz-go, idempotent by default), read back in order per partition, byte
// for byte.
func TestFranz200k(t *testing.T) {
	const total, partitions = 200_000, 8
	tb := startTestBroker(t, "")
	createTopics(t, tb.addr, "bulk", partitions)
	ctx := testCtx(t, 10*time.Minute)
	cl, err := kgo.NewClient(kgo.SeedBrokers(tb.addr), kgo.DefaultProduceTopic("bulk"),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(5*time.Millisecond), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for i := range total {
		wg.Add(1)
		r := &kgo.Record{Partition: int32(i % partitions), Value: payload(i)}
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				mu.Lock()
				firstErr = err
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("produce: %v", firstErr)
	}
	parts := readTopic(t, tb.addr, "bulk")
	for p := int32(0); p < partitions; p++ {
		recs := parts[p]
		if len(recs) != total/partitions {
			t.Fatalf("partition %d: %d records, want %d", p, len(recs), total/partitions)
		}
		for j, r := range recs {
			i := j*partitions + int(p) // records were produced round-robin, in order
			if !bytes.Equal(r.Value, payload(i)) {
				t.Fatalf("partition %d offset %d: wrong bytes (want record %d)", p, j, i)
			}
		}
	}
}
