package main

// Integration tests with IBM/sarama, a real Kafka client: its SyncProducer,
// its idempotent AsyncProducer, its partition consumer, and every
// compression codec, each against an in-process broker on loopback.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// saramaVersion is the Kafka version sarama is told to speak. 4.0 is the
// first Kafka without the protocol versions this broker never served
// (Produce v0-v2, ListOffsets v0); sarama still negotiates every request
// down to what ApiVersions advertises.
var saramaVersion = sarama.V4_0_0_0

// saramaConfig is a sarama config for one test: acks=all, successes and
// errors returned on channels, errors surfaced by the consumer.
func saramaConfig(t *testing.T) *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.ClientID = "sediment-" + t.Name()
	cfg.Version = saramaVersion
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Return.Errors = true
	cfg.Producer.Retry.Backoff = 50 * time.Millisecond
	cfg.Consumer.Return.Errors = true
	cfg.Metadata.Retry.Backoff = 50 * time.Millisecond
	return cfg
}

// saramaMessage turns a fixture record into a sarama message.
func saramaMessage(topic string, index int, r testRecord) *sarama.ProducerMessage {
	m := &sarama.ProducerMessage{Topic: topic, Value: sarama.ByteEncoder(r.Value), Timestamp: r.Timestamp, Metadata: index}
	if r.Key != nil {
		m.Key = sarama.ByteEncoder(r.Key) // a nil Encoder is a null key
	}
	for _, h := range r.Headers {
		m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value})
	}
	return m
}

// fromSarama turns a consumed sarama message into a fixture record.
func fromSarama(m *sarama.ConsumerMessage) testRecord {
	r := testRecord{Key: m.Key, Value: m.Value, Timestamp: m.Timestamp}
	for _, h := range m.Headers {
		r.Headers = append(r.Headers, testHeader{Key: string(h.Key), Value: h.Value})
	}
	return r
}

func TestSaramaSyncProducer(t *testing.T) {
	tb := startTestBroker(t, "")
	ctx := testCtx(t, 120*time.Second)
	const topic = "sarama-sync"
	createTopic(t, ctx, tb.addr, topic, 2)
	recs := makeRecords(topic, 60)

	prod, err := sarama.NewSyncProducer([]string{tb.addr}, saramaConfig(t))
	if err != nil {
		t.Fatalf("sync producer: %v", err)
	}
	var acks []producedAt
	half := len(recs) / 2
	for i, r := range recs[:half] { // one at a time
		p, off, err := prod.SendMessage(saramaMessage(topic, i, r))
		if err != nil {
			t.Fatalf("send record %d: %v", i, err)
		}
		acks = append(acks, producedAt{i, p, off})
	}
	var batch []*sarama.ProducerMessage // the rest in one call
	for i, r := range recs[half:] {
		batch = append(batch, saramaMessage(topic, half+i, r))
	}
	if err := prod.SendMessages(batch); err != nil {
		t.Fatalf("send %d records: %v", len(batch), err)
	}
	for _, m := range batch {
		acks = append(acks, producedAt{m.Metadata.(int), m.Partition, m.Offset})
	}
	if err := prod.Close(); err != nil {
		t.Errorf("close producer: %v", err)
	}
	consumeSaramaAll(t, ctx, tb.addr, topic, layoutByPartition(t, recs, acks))
}

func TestSaramaIdempotentAsyncProducer(t *testing.T) {
	tb := startTestBroker(t, "")
	ctx := testCtx(t, 120*time.Second)
	const topic = "sarama-async"
	createTopic(t, ctx, tb.addr, topic, 2)
	recs := makeRecords(topic, 300)

	cfg := saramaConfig(t)
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	cfg.Producer.Flush.MaxMessages = 7 // several batches per partition, so sequences advance
	prod, err := sarama.NewAsyncProducer([]string{tb.addr}, cfg)
	if err != nil {
		t.Fatalf("async producer: %v", err)
	}
	go func() { // Input and the result channels must be served at once
		for i, r := range recs {
			prod.Input() <- saramaMessage(topic, i, r)
		}
	}()
	acks := collectSaramaAcks(t, ctx, prod, len(recs))
	if err := prod.Close(); err != nil {
		t.Errorf("close producer: %v", err)
	}
	consumeSaramaAll(t, ctx, tb.addr, topic, layoutByPartition(t, recs, acks))
	checkIdempotentBatches(t, ctx, tb.addr, topic, 2)
}

// collectSaramaAcks reads n results from an async producer.
func collectSaramaAcks(t *testing.T, ctx context.Context, prod sarama.AsyncProducer, n int) []producedAt {
	t.Helper()
	var acks []producedAt
	for range n {
		select {
		case m := <-prod.Successes():
			acks = append(acks, producedAt{m.Metadata.(int), m.Partition, m.Offset})
		case perr := <-prod.Errors():
			t.Fatalf("produce record %v: %v", perr.Msg.Metadata, perr.Err)
		case <-ctx.Done():
			t.Fatalf("%d of %d records acknowledged before the hang guard: %v", len(acks), n, ctx.Err())
		}
	}
	return acks
}

// consumeSaramaAll reads every partition of want from the oldest offset with
// a sarama consumer and checks the records byte for byte.
func consumeSaramaAll(t *testing.T, ctx context.Context, addr, topic string, want map[int32][]testRecord) {
	t.Helper()
	cons, err := sarama.NewConsumer([]string{addr}, saramaConfig(t))
	if err != nil {
		t.Fatalf("consumer: %v", err)
	}
	defer cons.Close()
	parts, err := cons.Partitions(topic)
	if err != nil {
		t.Fatalf("partitions of %s: %v", topic, err)
	}
	for _, p := range parts {
		got := consumeSaramaPartition(t, ctx, cons, topic, p, len(want[p]))
		checkRecords(t, fmt.Sprintf("%s/%d", topic, p), want[p], got)
	}
}

// consumeSaramaPartition reads n records of one partition from the oldest
// offset, checking that offsets run 0..n-1 and that the high watermark is n.
func consumeSaramaPartition(t *testing.T, ctx context.Context, cons sarama.Consumer, topic string, p int32, n int) []testRecord {
	t.Helper()
	pc, err := cons.ConsumePartition(topic, p, sarama.OffsetOldest)
	if err != nil {
		t.Fatalf("consume %s/%d: %v", topic, p, err)
	}
	defer pc.Close()
	var got []testRecord
	for len(got) < n {
		select {
		case m := <-pc.Messages():
			if m.Offset != int64(len(got)) {
				t.Fatalf("%s/%d: read offset %d, want %d", topic, p, m.Offset, len(got))
			}
			got = append(got, fromSarama(m))
		case cerr := <-pc.Errors():
			t.Fatalf("consume %s/%d: %v", topic, p, cerr)
		case <-ctx.Done():
			t.Fatalf("%s/%d: read %d of %d records before the hang guard: %v", topic, p, len(got), n, ctx.Err())
		}
	}
	if hw := pc.HighWaterMarkOffset(); hw != int64(n) {
		t.Errorf("%s/%d: high watermark %d, want %d", topic, p, hw, n)
	}
	return got
}

// saramaCodecs maps each codec of codecCases to sarama's.
var saramaCodecs = map[string]sarama.CompressionCodec{
	"gzip":   sarama.CompressionGZIP,
	"snappy": sarama.CompressionSnappy,
	"lz4":    sarama.CompressionLZ4,
	"zstd":   sarama.CompressionZSTD,
}

func TestSaramaCompression(t *testing.T) {
	tb := startTestBroker(t, "")
	ctx := testCtx(t, 120*time.Second)
	for _, cc := range codecCases {
		t.Run(cc.name, func(t *testing.T) {
			topic := "sarama-" + cc.name
			createTopic(t, ctx, tb.addr, topic, 1)
			recs := makeRecords(topic, 40)
			cfg := saramaConfig(t)
			cfg.Producer.Compression = saramaCodecs[cc.name]
			prod, err := sarama.NewSyncProducer([]string{tb.addr}, cfg)
			if err != nil {
				t.Fatalf("producer: %v", err)
			}
			var msgs []*sarama.ProducerMessage
			for i, r := range recs {
				msgs = append(msgs, saramaMessage(topic, i, r))
			}
			err = prod.SendMessages(msgs)
			var perrs sarama.ProducerErrors
			if errors.As(err, &perrs) && len(perrs) > 0 {
				t.Fatalf("produce: %d errors, first: %v", len(perrs), perrs[0].Err)
			} else if err != nil {
				t.Fatalf("produce: %v", err)
			}
			if err := prod.Close(); err != nil {
				t.Errorf("close producer: %v", err)
			}
			checkCodec(t, ctx, tb.addr, topic, cc.id)
			cons, err := sarama.NewConsumer([]string{tb.addr}, saramaConfig(t))
			if err != nil {
				t.Fatalf("consumer: %v", err)
			}
			defer cons.Close()
			checkRecords(t, topic, recs, consumeSaramaPartition(t, ctx, cons, topic, 0, len(recs)))
		})
	}
}
