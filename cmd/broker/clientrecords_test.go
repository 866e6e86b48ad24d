package main

// The record fixture shared by the real-client integration tests (sarama,
// confluent-kafka-go): records with null and binary keys, empty, binary and
// highly compressible values, headers, and fixed create timestamps, so that
// reading them back proves every byte survived the broker.

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// testRecord is one record a client test produces and expects back.
type testRecord struct {
	Key       []byte // nil is a null key, which Kafka keeps apart from empty
	Value     []byte
	Headers   []testHeader
	Timestamp time.Time // create time, whole milliseconds
}

// testHeader is one record header.
type testHeader struct {
	Key   string
	Value []byte
}

// fixtureEpochMs is the create time of the first fixture record: a fixed
// moment, so a broker that restamped records would be caught.
const fixtureEpochMs = 1_700_000_000_000

// makeRecords returns n deterministic records whose contents vary with the
// index: record 0 has a null key, every seventh an empty value, every fifth
// a 16 KiB compressible value, and the rest binary keys, values and headers.
func makeRecords(prefix string, n int) []testRecord {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(len(prefix))))
	recs := make([]testRecord, n)
	for i := range recs {
		r := &recs[i]
		if i > 0 {
			r.Key = fmt.Appendf(nil, "%s-key-%d-\x00\xff", prefix, i)
		}
		switch {
		case i%7 == 3:
			r.Value = []byte{}
		case i%5 == 0:
			r.Value = []byte(strings.Repeat(fmt.Sprintf("%s record %d compresses well; ", prefix, i), 16<<10/32)[:16<<10])
		default:
			r.Value = randomBytes(rng, 1+rng.IntN(300))
		}
		for h := 0; h < i%3; h++ {
			r.Headers = append(r.Headers, testHeader{Key: fmt.Sprintf("h%d", h), Value: randomBytes(rng, h*8)})
		}
		r.Timestamp = time.UnixMilli(fixtureEpochMs + int64(i)*1000)
	}
	return recs
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
	return b
}

// diffRecord describes how got differs from want, "" when it does not. A nil
// (null) key must stay nil and a non-nil one non-nil; values and header
// values compare by bytes.
func diffRecord(want, got testRecord) string {
	var diffs []string
	if (want.Key == nil) != (got.Key == nil) || !bytes.Equal(want.Key, got.Key) {
		diffs = append(diffs, fmt.Sprintf("key %q (null %v), want %q (null %v)", got.Key, got.Key == nil, want.Key, want.Key == nil))
	}
	if !bytes.Equal(want.Value, got.Value) {
		diffs = append(diffs, fmt.Sprintf("value of %d bytes %.40q, want %d bytes %.40q", len(got.Value), got.Value, len(want.Value), want.Value))
	}
	if !want.Timestamp.Equal(got.Timestamp) {
		diffs = append(diffs, fmt.Sprintf("timestamp %d, want %d", got.Timestamp.UnixMilli(), want.Timestamp.UnixMilli()))
	}
	if len(want.Headers) != len(got.Headers) {
		diffs = append(diffs, fmt.Sprintf("%d headers, want %d", len(got.Headers), len(want.Headers)))
	} else {
		for i, h := range want.Headers {
			if g := got.Headers[i]; g.Key != h.Key || !bytes.Equal(g.Value, h.Value) {
				diffs = append(diffs, fmt.Sprintf("header %d %q=%q, want %q=%q", i, g.Key, g.Value, h.Key, h.Value))
			}
		}
	}
	return strings.Join(diffs, "; ")
}

// checkRecords fails t for every record of got that differs from want, and
// when the counts differ. Both are in offset order of one partition.
func checkRecords(t *testing.T, what string, want, got []testRecord) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: read back %d records, want %d", what, len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if d := diffRecord(want[i], got[i]); d != "" {
			t.Errorf("%s: record %d: %s", what, i, d)
		}
	}
}

// producedAt is where the producer says record index landed.
type producedAt struct {
	index     int
	partition int32
	offset    int64
}

// layoutByPartition checks the producer's acknowledgements against the log
// a single producer must build: per partition, offsets 0, 1, 2, ... in the
// order the records were produced. It returns the records expected in each
// partition, in offset order.
func layoutByPartition(t *testing.T, recs []testRecord, acks []producedAt) map[int32][]testRecord {
	t.Helper()
	if len(acks) != len(recs) {
		t.Fatalf("%d records acknowledged, want %d", len(acks), len(recs))
	}
	sort.Slice(acks, func(i, j int) bool {
		if acks[i].partition != acks[j].partition {
			return acks[i].partition < acks[j].partition
		}
		return acks[i].offset < acks[j].offset
	})
	want := map[int32][]testRecord{}
	last := map[int32]int{}
	for _, a := range acks {
		n := int64(len(want[a.partition]))
		if a.offset != n {
			t.Errorf("record %d acknowledged at partition %d offset %d, want offset %d", a.index, a.partition, a.offset, n)
		}
		if prev, ok := last[a.partition]; ok && prev > a.index {
			t.Errorf("partition %d: record %d stored after record %d", a.partition, a.index, prev)
		}
		last[a.partition] = a.index
		want[a.partition] = append(want[a.partition], recs[a.index])
	}
	return want
}

// codecCase is one compression codec: its name (librdkafka's
// compression.codec value) and the codec number in batch attributes.
type codecCase struct {
	name string
	id   int
}

var codecCases = []codecCase{{"gzip", 1}, {"snappy", 2}, {"lz4", 3}, {"zstd", 4}}

// createTopic creates topic with the given partitions through franz-go's
// admin client, so the client under test starts from a known layout.
func createTopic(t *testing.T, ctx context.Context, addr, topic string, partitions int32) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, -1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

// storedBatches fetches one partition of topic raw, as the broker stores
// it, and returns the header of every batch (Records left compressed). It
// proves what a client really sent: a test that only reads records back
// would pass just as well uncompressed or without producer ids.
func storedBatches(t *testing.T, ctx context.Context, addr, topic string, partition int32) []kmsg.RecordBatch {
	t.Helper()
	versions := kversion.Stable()
	versions.SetMaxKeyVersion(int16(kmsg.Fetch), 12) // v13+ names topics by id
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.MaxVersions(versions))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.MaxWaitMillis, req.MaxBytes = 12, 0, 64<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.PartitionMaxBytes = partition, 64<<20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("raw fetch of %s/%d: %v", topic, partition, err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("raw fetch of %s/%d: unexpected response shape", topic, partition)
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		t.Fatalf("raw fetch of %s/%d: error code %d", topic, partition, p.ErrorCode)
	}
	return splitRecordBatches(t, p.RecordBatches)
}

// splitRecordBatches parses record batches laid end to end.
func splitRecordBatches(t *testing.T, raw []byte) []kmsg.RecordBatch {
	t.Helper()
	var batches []kmsg.RecordBatch
	for len(raw) > 0 {
		var b kmsg.RecordBatch
		if err := b.ReadFrom(raw); err != nil {
			t.Fatalf("stored batch %d: %v", len(batches), err)
		}
		batches = append(batches, b)
		raw = raw[12+int(b.Length):]
	}
	return batches
}

// checkCodec fails t unless partition 0 of topic has batches and every one
// uses codec (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd).
func checkCodec(t *testing.T, ctx context.Context, addr, topic string, codec int) {
	t.Helper()
	batches := storedBatches(t, ctx, addr, topic, 0)
	if len(batches) == 0 {
		t.Fatalf("%s: no stored batches", topic)
	}
	for i, b := range batches {
		if c := int(b.Attributes & 0x07); c != codec {
			t.Errorf("%s: stored batch %d has codec %d, want %d", topic, i, c, codec)
		}
	}
}

// checkIdempotentBatches fails t unless every stored batch of the given
// partitions carries one producer id and epoch, with sequence numbers that
// continue from batch to batch without gap or overlap: what an idempotent
// producer writes and the broker must keep.
func checkIdempotentBatches(t *testing.T, ctx context.Context, addr, topic string, partitions int32) {
	t.Helper()
	for p := range partitions {
		batches := storedBatches(t, ctx, addr, topic, p)
		nextSeq := int32(0)
		for i, b := range batches {
			first := batches[0]
			switch {
			case b.ProducerID < 0:
				t.Errorf("%s/%d batch %d: producer id %d, want an idempotent producer's", topic, p, i, b.ProducerID)
			case b.ProducerID != first.ProducerID || b.ProducerEpoch != first.ProducerEpoch:
				t.Errorf("%s/%d batch %d: producer %d epoch %d, earlier batches %d epoch %d",
					topic, p, i, b.ProducerID, b.ProducerEpoch, first.ProducerID, first.ProducerEpoch)
			case b.FirstSequence != nextSeq:
				t.Errorf("%s/%d batch %d: first sequence %d, want %d", topic, p, i, b.FirstSequence, nextSeq)
			}
			nextSeq = b.FirstSequence + b.NumRecords
		}
	}
}

// brokerServes says whether the broker advertises key in ApiVersions.
func brokerServes(t *testing.T, ctx context.Context, addr string, key kmsg.Key) bool {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		t.Fatalf("ApiVersions: %v", err)
	}
	for _, k := range resp.ApiKeys {
		if k.ApiKey == int16(key) {
			return true
		}
	}
	return false
}
