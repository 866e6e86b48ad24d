package protocol

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func offsetDeleteReq(group string, topics map[string]int32) *kmsg.OffsetDeleteRequest {
	req := kmsg.NewPtrOffsetDeleteRequest()
	req.Group = group
	for _, name := range []string{"t", "u", "nope"} {
		if p, ok := topics[name]; ok {
			req.Topics = append(req.Topics, kmsg.OffsetDeleteRequestTopic{Topic: name,
				Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: p}}})
		}
	}
	return req
}

// TestOffsetDelete: a group in use keeps the offsets of the topics its
// members subscribe to; others go.
func TestOffsetDelete(t *testing.T) {
	t.Parallel()
	b := startGroupBroker(t)
	b.createTopic("t", 1, nil)
	b.createTopic("u", 1, nil)
	c := b.dial()
	m := joinAlone(t, c, "g", nil, "t") // subscribes to t only
	roundTrip[*kmsg.OffsetCommitResponse](c, commitReq(8, "g", m.id, m.gen, "t", 3, 0))
	roundTrip[*kmsg.OffsetCommitResponse](c, commitReq(8, "g", m.id, m.gen, "u", 4, 0))
	resp := roundTrip[*kmsg.OffsetDeleteResponse](c, offsetDeleteReq("g", map[string]int32{"t": 0, "u": 0, "nope": 0}))
	wantCode(t, "offset delete", resp.ErrorCode, 0)
	want := map[string]int16{"t": kerr.GroupSubscribedToTopic.Code, "u": 0, "nope": kerr.UnknownTopicOrPartition.Code}
	for _, rt := range resp.Topics {
		wantCode(t, "topic "+rt.Topic, rt.Partitions[0].ErrorCode, want[rt.Topic])
	}
	if got := fetchOffsets(t, c, "g", "t", 0) + " " + fetchOffsets(t, c, "g", "u", 0); got != "3/ -1/" {
		t.Fatalf("offsets after delete: %s", got)
	}
	wantCode(t, "unknown group", roundTrip[*kmsg.OffsetDeleteResponse](c, offsetDeleteReq("nope", nil)).ErrorCode, kerr.GroupIDNotFound.Code)
	wantCode(t, "empty group id", roundTrip[*kmsg.OffsetDeleteResponse](c, offsetDeleteReq("", nil)).ErrorCode, kerr.InvalidGroupID.Code)
}
