package protocol

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func createPartitionsReq(version int16, validateOnly bool, counts ...any) *kmsg.CreatePartitionsRequest {
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.Version, req.ValidateOnly, req.TimeoutMillis = version, validateOnly, 30000
	for i := 0; i+1 < len(counts); i += 2 {
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = counts[i].(string), int32(counts[i+1].(int))
		req.Topics = append(req.Topics, rt)
	}
	return req
}

func TestCreatePartitions(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("grow", 1, nil)
	c := b.dial()
	steps := []struct {
		name         string
		count        int
		validateOnly bool
		code         int16
		after        int
	}{
		{"grow", 3, false, 0, 3},
		{"same count", 3, false, kerr.InvalidPartitions.Code, 3},
		{"shrink", 2, false, kerr.InvalidPartitions.Code, 3},
		{"zero", 0, false, kerr.InvalidPartitions.Code, 3},
		{"validate only", 5, true, 0, 3},
		{"validate only shrink", 1, true, kerr.InvalidPartitions.Code, 3},
		{"grow again", 4, false, 0, 4},
	}
	for i, s := range steps {
		v := int16(i % 4)
		resp := roundTrip[*kmsg.CreatePartitionsResponse](c, createPartitionsReq(v, s.validateOnly, "grow", s.count))
		wantCode(t, s.name, resp.Topics[0].ErrorCode, s.code)
		if s.code != 0 && v >= 0 && resp.Topics[0].ErrorMessage == nil {
			t.Errorf("%s: no error message", s.name)
		}
		live, _ := b.log.Topic("grow")
		if n := len(live.Partitions()); n != s.after {
			t.Fatalf("%s: %d partitions, want %d", s.name, n, s.after)
		}
	}
	// The new partitions take data and show in Metadata.
	c.mustProduce("grow", 3, plainBatch(1, 10, 1).build(t))
	md := roundTrip[*kmsg.MetadataResponse](c, metadataReq(9, false, "grow"))
	if n := len(md.Topics[0].Partitions); n != 4 {
		t.Fatalf("metadata shows %d partitions", n)
	}
}

func TestCreatePartitionsErrors(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("twice", 1, nil)
	c := b.dial()
	resp := roundTrip[*kmsg.CreatePartitionsResponse](c, createPartitionsReq(3, false, "nope", 2, "twice", 2, "twice", 3))
	if len(resp.Topics) != 3 {
		t.Fatalf("%d answers", len(resp.Topics))
	}
	wantCode(t, "unknown topic", resp.Topics[0].ErrorCode, kerr.UnknownTopicOrPartition.Code)
	wantCode(t, "duplicate", resp.Topics[1].ErrorCode, kerr.InvalidRequest.Code)
	wantCode(t, "duplicate", resp.Topics[2].ErrorCode, kerr.InvalidRequest.Code)
	if live, _ := b.log.Topic("twice"); len(live.Partitions()) != 1 {
		t.Fatal("a duplicate entry changed the topic")
	}
}

// TestCreatePartitionsNoIncreaseMessage: a count that does not grow the
// topic is INVALID_PARTITIONS with Kafka's message, which kafka-topics
// --alter prints as it came.
func TestCreatePartitionsNoIncreaseMessage(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("four", 4, nil)
	c := b.dial()
	resp := roundTrip[*kmsg.CreatePartitionsResponse](c, createPartitionsReq(3, false, "four", 3))
	st := resp.Topics[0]
	wantCode(t, "shrink", st.ErrorCode, kerr.InvalidPartitions.Code)
	if want := "The topic four currently has 4 partition(s); 3 would not be an increase."; errorText(st.ErrorMessage) != want {
		t.Errorf("shrink: message %q, want %q", errorText(st.ErrorMessage), want)
	}
	resp = roundTrip[*kmsg.CreatePartitionsResponse](c, createPartitionsReq(3, true, "four", 4))
	st = resp.Topics[0]
	wantCode(t, "same count", st.ErrorCode, kerr.InvalidPartitions.Code)
	if want := "Topic already has 4 partition(s)."; errorText(st.ErrorMessage) != want {
		t.Errorf("same count: message %q, want %q", errorText(st.ErrorMessage), want)
	}
}
