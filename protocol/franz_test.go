package protocol

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// franzClient connects franz-go to the broker; kadm wraps it for admin.
func franzClient(t *testing.T, b *testBroker, opts ...kgo.Opt) (*kgo.Client, *kadm.Client) {
	t.Helper()
	opts = append([]kgo.Opt{kgo.SeedBrokers(b.addr), kgo.WithLogger(nil)}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatalf("kgo client: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl, kadm.NewClient(cl)
}

func franzCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), ioBound)
	t.Cleanup(cancel)
	return ctx
}

// TestFranzAdmin drives topic and config administration through kadm, the
// client the broker's own admin subcommands use.
func TestFranzAdmin(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	_, adm := franzClient(t, b)
	ctx := franzCtx(t)

	created, err := adm.CreateTopic(ctx, 2, -1, map[string]*string{"retention.ms": ptr("60000")}, "admin")
	if err != nil || created.ID == [16]byte{} {
		t.Fatalf("create topic: %v (id %x)", err, created.ID)
	}
	if _, err := adm.CreateTopic(ctx, 1, -1, nil, "admin"); !errors.Is(err, kerr.TopicAlreadyExists) {
		t.Fatalf("create it again: %v", err)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On("admin", nil)
	if err != nil || configValue(rc, "retention.ms") != "60000" {
		t.Fatalf("describe: %v, retention.ms %q", err, configValue(rc, "retention.ms"))
	}
	alter := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: ptr("120000")},
		{Op: kadm.AppendConfig, Name: "cleanup.policy", Value: ptr("compact")}}
	if res, err := adm.ValidateAlterTopicConfigs(ctx, alter, "admin"); err != nil || res[0].Err != nil {
		t.Fatalf("validate alter: %v %v", err, res)
	}
	if res, err := adm.AlterTopicConfigs(ctx, alter, "admin"); err != nil || res[0].Err != nil {
		t.Fatalf("alter: %v %v", err, res)
	}
	rcs, _ = adm.DescribeTopicConfigs(ctx, "admin")
	rc, _ = rcs.On("admin", nil)
	if configValue(rc, "retention.ms") != "120000" || configValue(rc, "cleanup.policy") != "delete,compact" {
		t.Fatalf("after alter: retention.ms %q cleanup.policy %q", configValue(rc, "retention.ms"), configValue(rc, "cleanup.policy"))
	}
	if res, err := adm.UpdatePartitions(ctx, 5, "admin"); err != nil || res.Error() != nil {
		t.Fatalf("update partitions: %v %v", err, res.Error())
	}
	if res, _ := adm.UpdatePartitions(ctx, 3, "admin"); !errors.Is(res.Error(), kerr.InvalidPartitions) {
		t.Fatalf("shrink: %v", res.Error())
	}
	md, err := adm.Metadata(ctx, "admin")
	if err != nil || len(md.Topics["admin"].Partitions) != 5 || md.Cluster != "test-cluster" {
		t.Fatalf("metadata: %v, %d partitions, cluster %q", err, len(md.Topics["admin"].Partitions), md.Cluster)
	}
	if res, err := adm.DeleteTopics(ctx, "admin", "never-was"); err != nil ||
		res["admin"].Err != nil || !errors.Is(res["never-was"].Err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("delete: %v %+v", err, res)
	}
	if b.hasTopic("admin") {
		t.Fatal("topic still exists")
	}
}

func configValue(rc kadm.ResourceConfig, name string) string {
	for _, c := range rc.Configs {
		if c.Key == name && c.Value != nil {
			return *c.Value
		}
	}
	return ""
}

// TestFranzProduceConsume: kgo's idempotent producer and a consumer
// against a LogAppendTime topic; the consumer sees every record once, in
// order, stamped by the broker, and ListOffsets agrees.
func TestFranzProduceConsume(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("stamped", 2, map[string]string{"message.timestamp.type": "LogAppendTime", "max.message.bytes": "4000"})
	ctx := franzCtx(t)
	producer, adm := franzClient(t, b, kgo.DefaultProduceTopic("stamped"), kgo.ProducerLinger(0))
	const n = 200
	before := time.Now().Add(-time.Minute).UnixMilli()
	for i := range n {
		r := &kgo.Record{Key: []byte(fmt.Sprint(i % 2)), Value: []byte(fmt.Sprint(i)), Timestamp: time.UnixMilli(1)}
		if err := producer.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	big := &kgo.Record{Value: make([]byte, 5000)}
	rand.Read(big.Value) // incompressible: the limit is on the batch as sent
	if err := producer.ProduceSync(ctx, big).FirstErr(); !errors.Is(err, kerr.MessageTooLarge) {
		t.Fatalf("record over max.message.bytes: %v", err)
	}
	ends, err := adm.ListEndOffsets(ctx, "stamped")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	if total != n {
		t.Fatalf("end offsets add up to %d, want %d", total, n)
	}

	consumer, _ := franzClient(t, b, kgo.ConsumeTopics("stamped"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	last := map[int32]int64{0: -1, 1: -1}
	for got := 0; got < n; {
		fs := consumer.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("after %d records: %v", got, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got++
			if r.Offset != last[r.Partition]+1 {
				t.Fatalf("partition %d: offset %d after %d", r.Partition, r.Offset, last[r.Partition])
			}
			last[r.Partition] = r.Offset
			if r.Attrs.TimestampType() != 1 || r.Timestamp.UnixMilli() < before {
				t.Fatalf("record %d/%d: timestamp type %d, timestamp %v", r.Partition, r.Offset, r.Attrs.TimestampType(), r.Timestamp)
			}
		})
	}
}
