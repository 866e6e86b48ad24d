package protocol

// DescribeTopicPartitions v0 (KIP-966): the paged topic description Java
// clients from 3.8 use for Admin.describeTopics when the broker offers it.
// Topics are answered in name order (every topic when none is named, and
// then unknown ones are left out); at most response_partition_limit
// partitions (capped to 2000, Kafka's max.request.partition.size.limit)
// are answered, and next_cursor says where to go on. A cursor whose topic
// is not among those named, or whose partition is negative, makes every
// named topic INVALID_REQUEST. There are no eligible leader replicas: a
// partition's leader (this broker on one node, its owner in a cluster) is
// its only replica; a partition no live broker owns is
// LEADER_NOT_AVAILABLE with leader -1, as in Metadata.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/storage/partition"
)

func init() { register(kmsg.DescribeTopicPartitions, 0, 0, handleDescribeTopicPartitions) }

// maxDescribedPartitions is Kafka's max.request.partition.size.limit.
const maxDescribedPartitions = 2000

func handleDescribeTopicPartitions(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.DescribeTopicPartitionsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
	cursor := kmsg.NewDescribeTopicPartitionsRequestCursor()
	if req.Cursor != nil {
		cursor = *req.Cursor
	}
	names, ok := r.describedNames(req, cursor.Topic)
	if !ok || cursor.Partition < 0 {
		for _, rt := range req.Topics {
			t := kmsg.NewDescribeTopicPartitionsResponseTopic()
			t.Topic, t.ErrorCode = kmsg.StringPtr(rt.Topic), r.code(kerr.InvalidRequest.Code)
			resp.Topics = append(resp.Topics, t)
		}
		return resp, nil
	}
	c := r.s.cluster()
	remaining := max(min(req.ResponsePartitionLimit, maxDescribedPartitions), 1)
	for _, name := range names {
		if remaining == 0 {
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name}
			break
		}
		start := int32(0)
		if name == cursor.Topic {
			start = cursor.Partition
		}
		t, next := r.describeTopicPartitions(c, name, start, remaining)
		if t.ErrorCode != 0 && len(req.Topics) == 0 {
			continue
		}
		remaining -= int32(len(t.Partitions))
		resp.Topics = append(resp.Topics, t)
		if next >= 0 { // the limit cut this topic short
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name, Partition: next}
			break
		}
	}
	return resp, nil
}

// describedNames returns the topics to answer, sorted, from the cursor's
// topic on; ok is false when a cursor names a topic not asked for.
func (r *request) describedNames(req *kmsg.DescribeTopicPartitionsRequest, from string) (names []string, ok bool) {
	if len(req.Topics) == 0 {
		for _, t := range r.s.log.Topics() {
			if t.Name >= from {
				names = append(names, t.Name)
			}
		}
		return names, true
	}
	for _, rt := range req.Topics {
		if rt.Topic >= from && !slices.Contains(names, rt.Topic) {
			names = append(names, rt.Topic)
		}
	}
	slices.Sort(names)
	return names, req.Cursor == nil || slices.Contains(names, from)
}

// describeTopicPartitions answers up to limit of name's partitions from
// start, and the partition to go on from (-1 when none is left).
func (r *request) describeTopicPartitions(c clusterState, name string, start, limit int32) (kmsg.DescribeTopicPartitionsResponseTopic, int32) {
	t := kmsg.NewDescribeTopicPartitionsResponseTopic()
	t.Topic = kmsg.StringPtr(name)
	t.AuthorizedOperations = authorizedAll
	topic, ok := r.s.log.Topic(name)
	if !ok {
		t.ErrorCode = r.code(kerr.UnknownTopicOrPartition.Code)
		return t, -1
	}
	t.TopicID = topic.ID
	parts := topic.Partitions()
	end := min(int(start)+int(limit), len(parts))
	for i := int(start); i < end; i++ {
		t.Partitions = append(t.Partitions, r.describedPartition(c, topic, parts[i]))
	}
	if end < len(parts) {
		return t, int32(end)
	}
	return t, -1
}

// describedPartition answers one partition: its leader is its only replica.
func (r *request) describedPartition(c clusterState, t *partition.Topic, part *partition.Partition) kmsg.DescribeTopicPartitionsResponseTopicPartition {
	p := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
	p.Partition = part.Index()
	p.EligibleLeaderReplicas, p.LastKnownELR, p.OfflineReplicas = []int32{}, []int32{}, []int32{}
	node, epoch, ok := c.leader(t, part)
	if !ok {
		p.ErrorCode, p.LeaderID, p.LeaderEpoch = r.code(kerr.LeaderNotAvailable.Code), -1, part.LeaderEpoch()
		p.Replicas, p.ISR = []int32{}, []int32{}
		return p
	}
	p.LeaderID, p.LeaderEpoch = node, epoch
	p.Replicas, p.ISR = []int32{node}, []int32{node}
	return p
}
