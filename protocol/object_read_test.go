package protocol

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/storage/partition"
)

// withLogOptions adjusts the partition.Log options.
func withLogOptions(fn func(*partition.Options)) brokerOpt {
	return func(s *brokerSetup) { s.logOpts = fn }
}

// TestReadsFromTheObjectStore: with a tail cache too small to hold
// anything, batches are served from the WAL and, once uploaded, from the
// object store; Fetch and ListOffsets answer the same from every tier.
func TestReadsFromTheObjectStore(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	b := startBroker(t, withLogOptions(func(o *partition.Options) {
		o.TailCacheBytes, o.UploadInterval, o.BlockSize = 1, 5*time.Millisecond, 512
		o.Metrics = partition.NewMetrics(reg)
	}))
	topic := b.createTopic("cold", 1, nil)
	c := b.dial()
	var sent [][]byte
	for i := range 6 {
		batch := withRecordTimestamps(int8([]int{0, 1, 4}[i%3]), int64(1000*i), int64(1000*i+5)).build(t)
		c.mustProduce("cold", 0, batch)
		sent = append(sent, batch)
	}
	// Bounded wait for the uploader to commit everything (not a timing
	// assertion: only the end state is checked).
	for i := 0; ; i++ {
		segs, err := b.meta.Segments(context.Background(), topic.ID, 0, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(segs); n > 0 && segs[n-1].EndOffset == 12 {
			break
		}
		if i == 3000 {
			t.Fatal("the uploader did not commit the batches")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A fetch may stop at an object's end, as Kafka's stops at a segment's:
	// read on from where each answer ends, as a consumer does.
	for start := int64(0); start < 12; start += 3 {
		var got [][]byte
		for next, i := start, 0; next < 12; i++ {
			p := c.fetchOne(fetchReq(12, "cold", [16]byte{}, 0, next))
			batches := splitFetched(t, p.RecordBatches)
			if len(batches) == 0 || i > 12 {
				t.Fatalf("fetch at %d: no progress at %d", start, next)
			}
			got = append(got, batches...)
			next = int64(batches[len(batches)-1][7]) + 2
		}
		if len(got) != 6-int(start/2) {
			t.Fatalf("fetch from %d: %d batches", start, len(got))
		}
		for i, raw := range got {
			want := sent[int(start/2)+i]
			if !batchCRCOK(raw) || string(raw[12:]) != string(want[12:]) {
				t.Fatalf("fetch from %d: batch %d differs from what was produced", start, i)
			}
		}
	}
	if n := objectReads(t, reg); n == 0 {
		t.Fatal("no fetch was served from the object store")
	}
	// KIP-74 holds for object reads too: one whole batch past the limits.
	req := fetchReq(12, "cold", [16]byte{}, 0, 4)
	req.MaxBytes, req.Topics[0].Partitions[0].PartitionMaxBytes = 10, 10
	if got := splitFetched(t, c.fetchOne(req).RecordBatches); len(got) != 1 || got[0][7] != 4 {
		t.Fatalf("KIP-74 from objects: %d batches", len(got))
	}
	resp := roundTrip[*kmsg.ListOffsetsResponse](c, listOffsetsReq(7, "cold", []int64{3002}))
	if p := resp.Topics[0].Partitions[0]; p.Offset != 7 || p.Timestamp != 3005 {
		t.Errorf("by timestamp from objects: offset %d timestamp %d, want 7 3005", p.Offset, p.Timestamp)
	}
	resp = roundTrip[*kmsg.ListOffsetsResponse](c, listOffsetsReq(7, "cold", []int64{-3}))
	if p := resp.Topics[0].Partitions[0]; p.Offset != 11 || p.Timestamp != 5005 {
		t.Errorf("max timestamp from objects: offset %d timestamp %d, want 11 5005", p.Offset, p.Timestamp)
	}
}

// objectReads returns how many partition reads the object store served.
func objectReads(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "sediment_fetch_reads_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "source" && l.GetValue() == "object" {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
