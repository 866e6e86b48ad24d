package main

// Integration tests with confluent-kafka-go, which wraps librdkafka (cgo,
// the bundled static library): an idempotent acks=all producer, a consumer
// reading back byte for byte, every compression codec, and librdkafka's own
// broker version negotiation (api.version.request, on by default).
//
// The consumer needs a group.id (confluent-kafka-go refuses to start
// without one) but the broker serves no group APIs yet, so it never
// subscribes: it assigns partitions at explicit offsets and commits nothing.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// confluentProducerConfig is an idempotent acks=all producer that forwards
// librdkafka's feature log (what ApiVersions negotiation enabled) to its
// Logs channel.
func confluentProducerConfig(addr string) *kafka.ConfigMap {
	return &kafka.ConfigMap{
		"bootstrap.servers":      addr,
		"broker.address.family":  "v4",
		"client.id":              "sediment-confluent-producer",
		"enable.idempotence":     true,
		"acks":                   "all",
		"linger.ms":              5,
		"debug":                  "feature",
		"go.logs.channel.enable": true,
	}
}

// confluentConsumerConfig is a consumer that never uses the group APIs: no
// subscription, no commits. Its log goes to its Logs channel.
func confluentConsumerConfig(addr string) *kafka.ConfigMap {
	return &kafka.ConfigMap{
		"bootstrap.servers":      addr,
		"broker.address.family":  "v4",
		"client.id":              "sediment-confluent-consumer",
		"group.id":               "sediment-confluent-test",
		"enable.auto.commit":     false,
		"auto.offset.reset":      "earliest",
		"enable.partition.eof":   true,
		"go.logs.channel.enable": true,
	}
}

// confluentMessage turns a fixture record into a librdkafka message.
func confluentMessage(topic string, index int, r testRecord) *kafka.Message {
	m := &kafka.Message{
		TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny},
		Key:            r.Key, // nil is a null key
		Value:          r.Value,
		Timestamp:      r.Timestamp,
		Opaque:         index,
	}
	for _, h := range r.Headers {
		m.Headers = append(m.Headers, kafka.Header{Key: h.Key, Value: h.Value})
	}
	return m
}

// fromConfluent turns a consumed message into a fixture record.
func fromConfluent(m *kafka.Message) testRecord {
	r := testRecord{Key: m.Key, Value: m.Value, Timestamp: m.Timestamp}
	for _, h := range m.Headers {
		r.Headers = append(r.Headers, testHeader{Key: h.Key, Value: h.Value})
	}
	return r
}

// rdkafkaLog collects, from a librdkafka Logs channel until it closes, the
// errors librdkafka logged (protocol parse failures among them: librdkafka
// logs and retries them, so only its log shows a broker answering wrongly)
// and what its ApiVersions negotiation decided ("Enabling feature MsgVer2",
// "Disabling feature LZ4", logged with debug=feature).
type rdkafkaLog struct {
	mu       sync.Mutex // guards the fields below
	errors   []string
	enabled  map[string]bool
	disabled map[string]bool
	done     chan struct{} // closed when the Logs channel is
}

// syslogWarning is the syslog level of warnings; librdkafka logs errors
// below it.
const syslogWarning = 4

func collectRdkafkaLog(logs chan kafka.LogEvent) *rdkafkaLog {
	rl := &rdkafkaLog{enabled: map[string]bool{}, disabled: map[string]bool{}, done: make(chan struct{})}
	go func() {
		defer close(rl.done)
		for ev := range logs {
			rl.add(ev)
		}
	}()
	return rl
}

func (rl *rdkafkaLog) add(ev kafka.LogEvent) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if ev.Level < syslogWarning {
		rl.errors = append(rl.errors, ev.Tag+" "+ev.Message)
	}
	if _, f, ok := strings.Cut(ev.Message, "Enabling feature "); ok {
		rl.enabled[strings.TrimSpace(f)] = true
	}
	if _, f, ok := strings.Cut(ev.Message, "Disabling feature "); ok {
		rl.disabled[strings.TrimSpace(f)] = true
	}
}

// firstError returns the first error logged so far, "" when none was.
func (rl *rdkafkaLog) firstError() string {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if len(rl.errors) == 0 {
		return ""
	}
	return rl.errors[0]
}

// checkNoErrors fails t for every error librdkafka logged. Call it after
// the client is closed.
func (rl *rdkafkaLog) checkNoErrors(t *testing.T, client string) {
	t.Helper()
	<-rl.done
	rl.mu.Lock()
	defer rl.mu.Unlock()
	for _, e := range rl.errors {
		t.Errorf("%s: librdkafka logged an error: %s", client, e)
	}
}

// has says whether feature was enabled on every connection. Call it after
// the producer is closed.
func (rl *rdkafkaLog) has(feature string) bool {
	<-rl.done
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return rl.enabled[feature] && !rl.disabled[feature]
}

// checkNegotiated fails t unless librdkafka's ApiVersions negotiation
// enabled the features the tests rely on. Without a working negotiation
// librdkafka falls back to Kafka 0.10 features (broker.version.fallback),
// which have neither record headers (MsgVer2) nor idempotence.
func (rl *rdkafkaLog) checkNegotiated(t *testing.T) {
	t.Helper()
	for _, f := range []string{"ApiVersion", "MsgVer2", "IdempotentProducer", "ZSTD"} {
		if !rl.has(f) {
			t.Errorf("librdkafka did not enable protocol feature %s after ApiVersions", f)
		}
	}
}

// produceConfluent produces recs with cfg and returns where each landed and
// what librdkafka negotiated.
func produceConfluent(t *testing.T, cfg *kafka.ConfigMap, topic string, recs []testRecord) ([]producedAt, *rdkafkaLog) {
	t.Helper()
	prod, err := kafka.NewProducer(cfg)
	if err != nil {
		t.Fatalf("producer: %v", err)
	}
	rl := collectRdkafkaLog(prod.Logs())
	delivered := make(chan kafka.Event, len(recs))
	for i, r := range recs {
		if err := prod.Produce(confluentMessage(topic, i, r), delivered); err != nil {
			prod.Close()
			t.Fatalf("produce record %d: %v", i, err)
		}
	}
	acks, err := awaitDeliveries(delivered, len(recs))
	prod.Close()
	if err != nil {
		t.Fatal(err)
	}
	rl.checkNoErrors(t, "producer")
	rl.checkNegotiated(t)
	return acks, rl
}

// awaitDeliveries reads n delivery reports. librdkafka reports every
// message, failed or not, within message.timeout.ms (300 s by default), so
// the loop ends; the timer only guards against a hang.
func awaitDeliveries(delivered chan kafka.Event, n int) ([]producedAt, error) {
	guard := time.NewTimer(120 * time.Second)
	defer guard.Stop()
	var acks []producedAt
	for range n {
		var ev kafka.Event
		select {
		case ev = <-delivered:
		case <-guard.C:
			return nil, fmt.Errorf("%d of %d delivery reports before the hang guard", len(acks), n)
		}
		m, ok := ev.(*kafka.Message)
		if !ok {
			return nil, fmt.Errorf("unexpected delivery event %T: %v", ev, ev)
		}
		if m.TopicPartition.Error != nil {
			return nil, fmt.Errorf("deliver record %v: %v", m.Opaque, m.TopicPartition.Error)
		}
		acks = append(acks, producedAt{m.Opaque.(int), m.TopicPartition.Partition, int64(m.TopicPartition.Offset)})
	}
	return acks, nil
}

// consumeConfluent assigns every partition at the beginning and reads
// until each has reported end of partition (enable.partition.eof) at the
// count want gives it, then checks the records byte for byte. Reaching the
// end takes a fetch answered with no records, which librdkafka must be able
// to parse.
func consumeConfluent(t *testing.T, ctx context.Context, addr, topic string, want map[int32][]testRecord, partitions int32) {
	t.Helper()
	cons, err := kafka.NewConsumer(confluentConsumerConfig(addr))
	if err != nil {
		t.Fatalf("consumer: %v", err)
	}
	rl := collectRdkafkaLog(cons.Logs())
	defer rl.checkNoErrors(t, "consumer")
	defer cons.Close()
	var assign []kafka.TopicPartition
	for p := range partitions {
		assign = append(assign, kafka.TopicPartition{Topic: &topic, Partition: p, Offset: kafka.OffsetBeginning})
	}
	if err := cons.Assign(assign); err != nil {
		t.Fatalf("assign: %v", err)
	}
	rd := &confluentRead{got: map[int32][]testRecord{}, ends: map[int32]int64{}}
	for !rd.done(want, partitions) {
		if ctx.Err() != nil {
			t.Fatalf("%s: read %d records, ends %v, before the hang guard", topic, rd.n, rd.ends)
		}
		if e := rl.firstError(); e != "" { // librdkafka retries forever: stop at once
			t.Fatalf("%s: librdkafka logged an error after %d records: %s", topic, rd.n, e)
		}
		rd.poll(t, cons)
	}
	for p := range partitions {
		checkRecords(t, fmt.Sprintf("%s/%d", topic, p), want[p], rd.got[p])
	}
}

// confluentRead is what a consumer has read so far.
type confluentRead struct {
	got  map[int32][]testRecord // per partition, in offset order
	ends map[int32]int64        // the last end-of-partition offset per partition
	n    int
}

// done says whether every partition reported its end after the records
// want gives it.
func (rd *confluentRead) done(want map[int32][]testRecord, partitions int32) bool {
	for p := range partitions {
		end, ok := rd.ends[p]
		if !ok || end < int64(len(want[p])) || len(rd.got[p]) < len(want[p]) {
			return false
		}
	}
	return true
}

// poll polls once, appending a message to got after checking it sits at the
// next offset of its partition, or noting an end of partition.
func (rd *confluentRead) poll(t *testing.T, cons *kafka.Consumer) {
	t.Helper()
	switch ev := cons.Poll(200).(type) {
	case nil:
	case *kafka.Message:
		tp := ev.TopicPartition
		if tp.Error != nil {
			t.Fatalf("consume %v: %v", tp, tp.Error)
		}
		if want := int64(len(rd.got[tp.Partition])); int64(tp.Offset) != want {
			t.Fatalf("partition %d: read offset %d, want %d", tp.Partition, tp.Offset, want)
		}
		if ev.TimestampType != kafka.TimestampCreateTime {
			t.Errorf("partition %d offset %d: timestamp type %v, want CreateTime", tp.Partition, tp.Offset, ev.TimestampType)
		}
		rd.got[tp.Partition] = append(rd.got[tp.Partition], fromConfluent(ev))
		rd.n++
	case kafka.PartitionEOF:
		rd.ends[ev.Partition] = int64(ev.Offset)
	case kafka.Error:
		t.Fatalf("consumer error (code %v, fatal %v): %v", ev.Code(), ev.IsFatal(), ev)
	default:
		t.Logf("consumer event %T: %v", ev, ev)
	}
}

func TestConfluentIdempotentRoundTrip(t *testing.T) {
	tb := startTestBroker(t, "")
	ctx := testCtx(t, 120*time.Second)
	const topic = "confluent-roundtrip"
	createTopic(t, ctx, tb.addr, topic, 2)
	recs := makeRecords(topic, 300)
	acks, _ := produceConfluent(t, confluentProducerConfig(tb.addr), topic, recs)
	consumeConfluent(t, ctx, tb.addr, topic, layoutByPartition(t, recs, acks), 2)
	checkIdempotentBatches(t, ctx, tb.addr, topic, 2)
}

func TestConfluentCompression(t *testing.T) {
	tb := startTestBroker(t, "")
	ctx := testCtx(t, 120*time.Second)
	for _, cc := range codecCases {
		t.Run(cc.name, func(t *testing.T) {
			topic := "confluent-" + cc.name
			createTopic(t, ctx, tb.addr, topic, 1)
			recs := makeRecords(topic, 40)
			cfg := confluentProducerConfig(tb.addr)
			cfg.SetKey("compression.codec", cc.name)
			acks, features := produceConfluent(t, cfg, topic, recs)
			want := layoutByPartition(t, recs, acks)
			checkCodec(t, ctx, tb.addr, topic, confluentExpectedCodec(t, ctx, tb.addr, cc, features))
			consumeConfluent(t, ctx, tb.addr, topic, want, 1)
			checkIdempotentBatches(t, ctx, tb.addr, topic, 1)
		})
	}
}

// confluentExpectedCodec is the codec librdkafka must have stored for cc.
// librdkafka enables LZ4 only for brokers that serve FindCoordinator v0 (its
// proxy for Kafka >= 0.9, rdkafka_feature.c) and otherwise sends LZ4
// batches uncompressed. The broker has no group APIs yet, so until it
// serves FindCoordinator the lz4 case expects uncompressed batches (the
// records must still come back byte for byte); once it does, this turns
// into the strict check by itself.
func confluentExpectedCodec(t *testing.T, ctx context.Context, addr string, cc codecCase, features *rdkafkaLog) int {
	t.Helper()
	if cc.name != "lz4" || brokerServes(t, ctx, addr, kmsg.FindCoordinator) {
		return cc.id
	}
	if features.has("LZ4") {
		t.Errorf("librdkafka enabled LZ4 although the broker does not serve FindCoordinator")
	}
	t.Log("KNOWN GAP: the broker does not serve FindCoordinator, so librdkafka disables its LZ4 feature " +
		"and sends compression.codec=lz4 batches uncompressed; checking for codec 0 until group APIs land")
	return 0
}
