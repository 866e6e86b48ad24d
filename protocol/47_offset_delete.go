package protocol

// OffsetDelete v0: deletes committed offsets of a group, durably, before
// answering (the wait runs on the writer, request.wait). An empty group
// may lose any of them; a consumer group in use keeps the offsets of topics
// its members subscribe to (GROUP_SUBSCRIBED_TO_TOPIC per partition), and a
// group in use with another protocol type refuses (NON_EMPTY_GROUP). An
// unknown group is GROUP_ID_NOT_FOUND, an unknown topic or partition
// UNKNOWN_TOPIC_OR_PARTITION, an empty group id INVALID_GROUP_ID.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/groupcoord"
	"github.com/sediment-io/sediment/metadata"
)

func init() { register(kmsg.OffsetDelete, 0, 0, handleOffsetDelete) }

func handleOffsetDelete(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.OffsetDeleteRequest)
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	r.wait = func() { r.offsetDelete(req, resp) }
	return resp, nil
}

func (r *request) offsetDelete(req *kmsg.OffsetDeleteRequest, resp *kmsg.OffsetDeleteResponse) {
	var parts []metadata.GroupPartition
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			parts = append(parts, metadata.GroupPartition{Topic: t.Topic, Partition: p.Partition})
		}
	}
	res := groupcoord.DeleteOffsetsResult{Err: groupcoord.ErrCoordinatorNotAvailable}
	if r.s.groups != nil {
		res, _ = awaitGroup(r, r.s.groups.DeleteOffsets(req.Group, parts), res)
	}
	if res.Err != nil {
		resp.ErrorCode = r.codeOf(res.Err)
		return
	}
	i := 0
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, r.codeOf(res.Partitions[i])
			rt.Partitions = append(rt.Partitions, rp)
			i++
		}
		resp.Topics = append(resp.Topics, rt)
	}
}
