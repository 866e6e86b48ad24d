package protocol

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/storage/partition"
)

func TestDeleteTopicsByName(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := b.dial()
	for _, v := range []int16{0, 3, 4, 5, 6} {
		name := "del-v" + string(rune('0'+v))
		b.createTopic(name, 1, nil)
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.Version, req.TimeoutMillis = v, 30000
		if v >= 6 {
			req.Topics = []kmsg.DeleteTopicsRequestTopic{{Topic: ptr(name)}, {Topic: ptr("never-was")}}
		} else {
			req.TopicNames = []string{name, "never-was"}
		}
		resp := roundTrip[*kmsg.DeleteTopicsResponse](c, req)
		if len(resp.Topics) != 2 {
			t.Fatalf("v%d: %d answers", v, len(resp.Topics))
		}
		wantCode(t, "delete existing", resp.Topics[0].ErrorCode, 0)
		wantCode(t, "delete unknown", resp.Topics[1].ErrorCode, kerr.UnknownTopicOrPartition.Code)
		if b.hasTopic(name) {
			t.Fatalf("v%d: topic still exists", v)
		}
		p := c.produce(name, 0, plainBatch(1, 10, 1).build(t))
		wantCode(t, "produce to a deleted topic", p.ErrorCode, kerr.UnknownTopicOrPartition.Code)
	}
}

func TestDeleteTopicsByID(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := b.dial()
	victim := b.createTopic("victim", 2, nil)
	b.createTopic("both", 1, nil)
	b.createTopic("dup", 1, nil)
	unknown := [16]byte{0xde, 0xad}
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version, req.TimeoutMillis = 6, 30000
	req.Topics = []kmsg.DeleteTopicsRequestTopic{
		{TopicID: victim.ID},
		{TopicID: unknown},
		{Topic: ptr("both"), TopicID: victim.ID},
		{},
		{Topic: ptr("dup")},
		{Topic: ptr("dup")},
	}
	resp := roundTrip[*kmsg.DeleteTopicsResponse](c, req)
	byKey := map[string]kmsg.DeleteTopicsResponseTopic{}
	for _, st := range resp.Topics {
		key := string(st.TopicID[:])
		if st.Topic != nil {
			key = *st.Topic + "/" + key
		}
		byKey[key] = st
	}
	check := func(what string, name *string, id [16]byte, want int16) {
		t.Helper()
		key := string(id[:])
		if name != nil {
			key = *name + "/" + key
		}
		st, ok := byKey[key]
		if !ok {
			t.Errorf("%s: no answer (have %d answers)", what, len(resp.Topics))
			return
		}
		wantCode(t, what, st.ErrorCode, want)
	}
	// Kafka answers a deletion by id with the topic's name.
	check("by id", ptr("victim"), victim.ID, 0)
	check("unknown id", nil, unknown, kerr.UnknownTopicID.Code)
	check("name and id", ptr("both"), victim.ID, kerr.InvalidRequest.Code)
	check("neither name nor id", nil, [16]byte{}, kerr.InvalidRequest.Code)
	check("duplicate name", ptr("dup"), [16]byte{}, kerr.InvalidRequest.Code)
	if b.hasTopic("victim") || !b.hasTopic("both") || !b.hasTopic("dup") {
		t.Fatalf("victim exists %v, both %v, dup %v", b.hasTopic("victim"), b.hasTopic("both"), b.hasTopic("dup"))
	}
}

// TestDeleteTopicsWhileUploading deletes topics whose batches are being
// uploaded, then shuts the log down: the shutdown must finish. (It spun
// forever: an upload in flight for a deleted partition subtracted its bytes
// from the uploader's pending count a second time, and the final flush
// waited for that count to come back to zero.)
func TestDeleteTopicsWhileUploading(t *testing.T) {
	t.Parallel()
	b := startBroker(t, withLogOptions(func(o *partition.Options) { o.UploadInterval = time.Millisecond }))
	c := b.dial()
	for range 40 {
		b.createTopic("churn", 2, nil)
		for i := range 6 {
			c.mustProduce("churn", int32(i%2), plainBatch(3, 100, 1).build(t))
		}
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.Version, req.TopicNames = 5, []string{"churn"}
		wantCode(t, "delete", roundTrip[*kmsg.DeleteTopicsResponse](c, req).Topics[0].ErrorCode, 0)
	}
	b.srv.Close()
	closed := make(chan error, 1)
	go func() { closed <- b.closeLog() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("close: %v", err)
		}
	case <-time.After(ioBound): // a hang guard, not a timing assertion
		t.Fatal("the log never finished closing")
	}
}
