package protocol

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestDeleteRecordsWithKadm drives DeleteRecords through franz-go's admin
// client, as an operator's tool would.
func TestDeleteRecordsWithKadm(t *testing.T) {
	b := startBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.addr), kgo.DefaultProduceTopic("dr"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "dr"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "dr", Partition: 0, At: 4})
	offs.Add(kadm.Offset{Topic: "nope", Partition: 0, At: 1})
	res, err := adm.DeleteRecords(ctx, offs) // err: the unknown topic's shard failed
	if r, _ := res.Lookup("dr", 0); r.Err != nil || r.LowWatermark != 4 {
		t.Fatalf("dr/0: %+v (err %v)", r, err)
	}
	if r, ok := res.Lookup("nope", 0); err == nil && (!ok || r.Err == nil) {
		t.Fatal("unknown topic accepted")
	}
	starts, err := adm.ListStartOffsets(ctx, "dr")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := starts.Lookup("dr", 0); o.Offset != 4 {
		t.Fatalf("start offset %d after DeleteRecords, want 4", o.Offset)
	}
	offs = kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "dr", Partition: 0, At: 99})
	res, _ = adm.DeleteRecords(ctx, offs)
	if r, _ := res.Lookup("dr", 0); r.Err == nil {
		t.Fatal("an offset past the high watermark was accepted")
	}
}
