package protocol

// OffsetFetch v0–v10. A partition without a committed offset (or whose
// topic was deleted since) answers offset -1, leader epoch -1, metadata ""
// and no error, as Kafka does; so does every partition of an unknown group.
// v2+ asks for every committed offset with a null topic list and carries a
// top-level error (v0–v1 put it on each partition); v7+ has require_stable,
// which waits until the group's commits in flight are durable and answers
// a partition with transactional offsets pending (committed in a
// transaction that has not ended) UNSTABLE_OFFSET_COMMIT, offset -1, which
// the client retries, as Kafka does; without it the last committed offset
// is answered, the pending one never; v8+ asks for
// many groups at once, each with its own error (KIP-709); v9's member id and
// epoch belong to the KIP-848 protocol and are ignored for classic groups;
// v10 names topics by id (UNKNOWN_TOPIC_ID when unknown). As in Kafka 4, an
// empty group id is a group like any other here. It runs on the writer
// (request.wait), after the connection's earlier commits.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/groupcoord"
)

func init() { register(kmsg.OffsetFetch, 0, 10, handleOffsetFetch) }

func handleOffsetFetch(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.OffsetFetchRequest)
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	r.wait = func() { r.offsetFetch(req, resp) }
	return resp, nil
}

func (r *request) offsetFetch(req *kmsg.OffsetFetchRequest, resp *kmsg.OffsetFetchResponse) {
	if req.Version >= 8 {
		for _, rg := range req.Groups {
			resp.Groups = append(resp.Groups, r.fetchGroup(req, rg))
		}
		return
	}
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = req.Group
	if req.Topics != nil || req.Version < 2 { // v0-v1 cannot ask for all
		rg.Topics = []kmsg.OffsetFetchRequestGroupTopic{}
		for _, t := range req.Topics {
			rg.Topics = append(rg.Topics, kmsg.OffsetFetchRequestGroupTopic{Topic: t.Topic, Partitions: t.Partitions})
		}
	}
	g := r.fetchGroup(req, rg)
	resp.ErrorCode = g.ErrorCode
	if g.ErrorCode != 0 && req.Version < 2 {
		g.Topics = fetchFailed(rg.Topics, g.ErrorCode)
	}
	for _, gt := range g.Topics {
		rt := kmsg.NewOffsetFetchResponseTopic()
		rt.Topic = gt.Topic
		for _, gp := range gt.Partitions {
			rt.Partitions = append(rt.Partitions, kmsg.OffsetFetchResponseTopicPartition{Partition: gp.Partition,
				Offset: gp.Offset, LeaderEpoch: gp.LeaderEpoch, Metadata: gp.Metadata, ErrorCode: gp.ErrorCode})
		}
		resp.Topics = append(resp.Topics, rt)
	}
}

// fetchGroup answers one group.
func (r *request) fetchGroup(req *kmsg.OffsetFetchRequest, rg kmsg.OffsetFetchRequestGroup) kmsg.OffsetFetchResponseGroup {
	out := kmsg.NewOffsetFetchResponseGroup()
	out.Group = rg.Group
	fr := groupcoord.FetchRequest{Group: rg.Group, RequireStable: req.RequireStable}
	var unknownIDs []kmsg.OffsetFetchRequestGroupTopic
	if rg.Topics != nil {
		fr.Topics = []groupcoord.FetchTopic{}
		for _, t := range rg.Topics {
			name := t.Topic
			if req.Version >= 10 {
				lt, ok := r.s.log.TopicByID(t.TopicID)
				if !ok {
					unknownIDs = append(unknownIDs, t)
					continue
				}
				name = lt.Name
			}
			fr.Topics = append(fr.Topics, groupcoord.FetchTopic{Topic: name, Partitions: t.Partitions})
		}
	}
	res := groupcoord.FetchResult{Err: groupcoord.ErrCoordinatorNotAvailable}
	if r.s.groups != nil {
		res, _ = awaitGroup(r, r.s.groups.FetchOffsets(fr), res)
	}
	if res.Err != nil {
		out.ErrorCode = r.codeOf(res.Err)
		return out
	}
	for _, t := range res.Topics {
		gt := kmsg.NewOffsetFetchResponseGroupTopic()
		gt.Topic, gt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			gp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
			gp.Partition, gp.Offset, gp.LeaderEpoch, gp.Metadata = p.Partition, p.Offset, p.LeaderEpoch, kmsg.StringPtr(p.Metadata)
			gp.ErrorCode = r.codeOf(p.Err)
			gt.Partitions = append(gt.Partitions, gp)
		}
		out.Topics = append(out.Topics, gt)
	}
	if len(unknownIDs) > 0 {
		out.Topics = append(out.Topics, fetchFailed(unknownIDs, r.code(kerr.UnknownTopicID.Code))...)
	}
	return out
}

// fetchFailed answers every partition of topics with code.
func fetchFailed(topics []kmsg.OffsetFetchRequestGroupTopic, code int16) []kmsg.OffsetFetchResponseGroupTopic {
	var out []kmsg.OffsetFetchResponseGroupTopic
	for _, t := range topics {
		gt := kmsg.NewOffsetFetchResponseGroupTopic()
		gt.Topic, gt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			gp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
			gp.Partition, gp.Offset, gp.ErrorCode, gp.Metadata = p, -1, code, kmsg.StringPtr("")
			gt.Partitions = append(gt.Partitions, gp)
		}
		out = append(out, gt)
	}
	return out
}
