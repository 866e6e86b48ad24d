package protocol

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/metadata"
)

// describedPage renders a DescribeTopicPartitions answer as
// "topic:code[partitions] ... > cursor" for comparison.
func describedPage(resp *kmsg.DescribeTopicPartitionsResponse) string {
	var parts []string
	for _, t := range resp.Topics {
		var ps []string
		for _, p := range t.Partitions {
			ps = append(ps, fmt.Sprint(p.Partition))
		}
		parts = append(parts, fmt.Sprintf("%s:%d[%s]", *t.Topic, t.ErrorCode, strings.Join(ps, ",")))
	}
	if c := resp.NextCursor; c != nil {
		parts = append(parts, fmt.Sprintf("> %s/%d", c.Topic, c.Partition))
	}
	return strings.Join(parts, " ")
}

func TestDescribeTopicPartitions(t *testing.T) {
	t.Parallel()
	ida := metadata.TopicID{1}
	b := startBroker(t, withTopic("a", ida, 2), withTopic("b", metadata.TopicID{2}, 3), withTopic("c", metadata.TopicID{3}, 1))
	c := b.dial()
	unknown := kerr.UnknownTopicOrPartition.Code
	invalid := kerr.InvalidRequest.Code
	cases := []struct {
		name   string
		topics []string
		limit  int32
		cursor *kmsg.DescribeTopicPartitionsRequestCursor
		want   string
	}{
		{"named, sorted, unknown answered", []string{"b", "nope", "a"}, 2000, nil, fmt.Sprintf("a:0[0,1] b:0[0,1,2] nope:%d[]", unknown)},
		{"all, no limit", nil, 2000, nil, "a:0[0,1] b:0[0,1,2] c:0[0]"},
		{"limit cuts a topic short", nil, 3, nil, "a:0[0,1] b:0[0] > b/1"},
		{"limit ends with a topic", nil, 2, nil, "a:0[0,1] > b/0"},
		{"cursor inside a topic", nil, 3, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "b", Partition: 1}, "b:0[1,2] c:0[0]"},
		{"limit 0 is 1", []string{"a"}, 0, nil, "a:0[0] > a/1"},
		{"cursor topic not named", []string{"a"}, 10, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "b"}, fmt.Sprintf("a:%d[]", invalid)},
		{"negative cursor partition", []string{"a"}, 10, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "a", Partition: -1}, fmt.Sprintf("a:%d[]", invalid)},
	}
	for _, tc := range cases {
		req := kmsg.NewPtrDescribeTopicPartitionsRequest()
		for _, name := range tc.topics {
			req.Topics = append(req.Topics, kmsg.DescribeTopicPartitionsRequestTopic{Topic: name})
		}
		req.ResponsePartitionLimit, req.Cursor = tc.limit, tc.cursor
		resp := roundTrip[*kmsg.DescribeTopicPartitionsResponse](c, req)
		if got := describedPage(resp); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	req.Topics, req.ResponsePartitionLimit = []kmsg.DescribeTopicPartitionsRequestTopic{{Topic: "a"}}, 10
	a := roundTrip[*kmsg.DescribeTopicPartitionsResponse](c, req).Topics[0]
	if a.TopicID != ida || a.IsInternal || a.AuthorizedOperations != authorizedAll {
		t.Errorf("topic a: id %x internal %v operations %d", a.TopicID, a.IsInternal, a.AuthorizedOperations)
	}
	for _, p := range a.Partitions {
		if p.LeaderID != 0 || len(p.Replicas) != 1 || len(p.ISR) != 1 || p.EligibleLeaderReplicas == nil || len(p.OfflineReplicas) != 0 {
			t.Errorf("topic a partition %+v", p)
		}
	}
}
