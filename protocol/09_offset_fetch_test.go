package protocol

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/metadata"
)

// fetchOffsets fetches (v5) partitions of topic and formats them as
// offset/metadata, comma-separated.
func fetchOffsets(t *testing.T, c *rawClient, group, topic string, parts ...int32) string {
	t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version, req.Group = 5, group
	req.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: topic, Partitions: parts}}
	resp := roundTrip[*kmsg.OffsetFetchResponse](c, req)
	wantCode(t, "offset fetch", resp.ErrorCode, 0)
	var out []string
	for _, p := range resp.Topics[0].Partitions {
		wantCode(t, "offset fetch partition", p.ErrorCode, 0)
		md := "<nil>"
		if p.Metadata != nil {
			md = *p.Metadata
		}
		out = append(out, fmt.Sprintf("%d/%s", p.Offset, md))
	}
	return strings.Join(out, ",")
}

// TestOffsetFetchMultiGroup: v8+ asks for several groups at once, each with
// its own answer: named partitions, all partitions (null topics), an
// unknown group (offset -1, no error) and an unknown topic id (v10).
func TestOffsetFetchMultiGroup(t *testing.T) {
	t.Parallel()
	id := metadata.NewTopicID()
	b := startBroker(t, withTopic("t", id, 3))
	c := b.dial()
	roundTrip[*kmsg.OffsetCommitResponse](c, commitReq(8, "a", "", -1, "t", 5, 0, 1))
	roundTrip[*kmsg.OffsetCommitResponse](c, commitReq(8, "b", "", -1, "t", 9, 2))
	for _, v := range []int16{8, 9, 10} {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version, req.RequireStable = v, true
		topic := kmsg.OffsetFetchRequestGroupTopic{Topic: "t", TopicID: id, Partitions: []int32{0, 2}}
		req.Groups = []kmsg.OffsetFetchRequestGroup{
			{Group: "a", Topics: []kmsg.OffsetFetchRequestGroupTopic{topic}},
			{Group: "b"}, // all
			{Group: "nobody", Topics: []kmsg.OffsetFetchRequestGroupTopic{topic}},
		}
		resp := roundTrip[*kmsg.OffsetFetchResponse](c, req)
		if len(resp.Groups) != 3 {
			t.Fatalf("v%d: %d groups answered", v, len(resp.Groups))
		}
		want := []string{"a:t/0=5,t/2=-1", "b:t/2=9", "nobody:t/0=-1,t/2=-1"}
		for i, g := range resp.Groups {
			wantCode(t, g.Group, g.ErrorCode, 0)
			if got := fmtGroup(g, v >= 10, id); got != want[i] {
				t.Errorf("v%d: group %s, want %s", v, got, want[i])
			}
		}
	}
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 10
	req.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "a", Topics: []kmsg.OffsetFetchRequestGroupTopic{{TopicID: metadata.NewTopicID(), Partitions: []int32{0}}}}}
	g := roundTrip[*kmsg.OffsetFetchResponse](c, req).Groups[0]
	wantCode(t, "unknown topic id", g.Topics[0].Partitions[0].ErrorCode, kerr.UnknownTopicID.Code)
}

// fmtGroup formats a group's answer as group:topic/partition=offset,...
func fmtGroup(g kmsg.OffsetFetchResponseGroup, byID bool, id [16]byte) string {
	var parts []string
	for _, t := range g.Topics {
		name := t.Topic
		if byID && t.TopicID == id {
			name = "t"
		}
		for _, p := range t.Partitions {
			parts = append(parts, fmt.Sprintf("%s/%d=%d", name, p.Partition, p.Offset))
		}
	}
	return g.Group + ":" + strings.Join(parts, ",")
}

// TestOffsetFetchOldVersions: v1 cannot ask for every partition and puts a
// group error on each partition; v2+ asks for all with null topics.
func TestOffsetFetchOldVersions(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("t", 2, nil)
	c := b.dial()
	roundTrip[*kmsg.OffsetCommitResponse](c, commitReq(2, "g", "", -1, "t", 4, 1))
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version, req.Group = 1, "g"
	req.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "t", Partitions: []int32{0, 1}}}
	resp := roundTrip[*kmsg.OffsetFetchResponse](c, req)
	if len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].Offset != -1 || resp.Topics[0].Partitions[1].Offset != 4 {
		t.Fatalf("v1: %+v", resp.Topics)
	}
	all := kmsg.NewPtrOffsetFetchRequest()
	all.Version, all.Group, all.Topics = 7, "g", nil
	resp = roundTrip[*kmsg.OffsetFetchResponse](c, all)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].Offset != 4 {
		t.Fatalf("v7 all: %+v", resp.Topics)
	}
}
