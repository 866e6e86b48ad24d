package protocol

// OffsetCommit v0–v10. The offsets of one request are made durable in one
// metadata transaction (shared with every other commit pending at that
// moment: group commit) before the answer, which waits on the writer
// (request.wait). A member commits with its generation (ILLEGAL_GENERATION,
// UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS while the
// generation completes); generation -1 is a standalone commit, accepted
// for an empty group only (v0 has no generation: always standalone). As
// in Kafka 4, an empty group id is a group like any other for commits. A
// commit with a generation to an unknown group is ILLEGAL_GENERATION, or
// GROUP_ID_NOT_FOUND from v9. Metadata longer than
// offset.metadata.max.bytes is OFFSET_METADATA_TOO_LARGE per partition. The
// v2–v4 retention time is ignored: offsets.retention.minutes applies
// (KIP-211). v10 names topics by id (UNKNOWN_TOPIC_ID when unknown).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/groupcoord"
)

func init() { register(kmsg.OffsetCommit, 0, 10, handleOffsetCommit) }

func handleOffsetCommit(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.OffsetCommitRequest)
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	r.wait = func() { r.offsetCommit(req, resp) }
	return resp, nil
}

// commitSlot is where one committed partition's answer goes.
type commitSlot struct{ topic, part int }

func (r *request) offsetCommit(req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse) {
	cr := groupcoord.CommitRequest{Group: req.Group, MemberID: req.MemberID, InstanceID: req.InstanceID,
		Generation: req.Generation, GroupNotFoundError: req.Version >= 9}
	if req.Version == 0 {
		cr.Generation, cr.MemberID = -1, ""
	}
	var slots []commitSlot
	for ti, rt := range req.Topics {
		st := kmsg.NewOffsetCommitResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		name, known := r.commitTopicName(req.Version, rt)
		for pi, rp := range rt.Partitions {
			sp := kmsg.NewOffsetCommitResponseTopicPartition()
			sp.Partition = rp.Partition
			if !known {
				sp.ErrorCode = r.code(kerr.UnknownTopicID.Code)
			} else {
				slots = append(slots, commitSlot{ti, pi})
				cr.Offsets = append(cr.Offsets, groupcoord.CommitOffset{Topic: name, Partition: rp.Partition,
					Offset: rp.Offset, LeaderEpoch: rp.LeaderEpoch, Metadata: rp.Metadata})
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if len(slots) == 0 {
		return
	}
	res := groupcoord.CommitResult{Err: groupcoord.ErrCoordinatorNotAvailable}
	if r.s.groups != nil {
		res, _ = awaitGroup(r, r.s.groups.Commit(cr), res)
	}
	for i, s := range slots {
		err := res.Err
		if err == nil {
			err = res.Partitions[i]
		}
		resp.Topics[s.topic].Partitions[s.part].ErrorCode = r.codeOf(err)
	}
}

// commitTopicName resolves a committed topic: by name, or from v10 by id;
// known is false for an id no topic has.
func (r *request) commitTopicName(version int16, rt kmsg.OffsetCommitRequestTopic) (name string, known bool) {
	if version < 10 {
		return rt.Topic, true
	}
	t, ok := r.s.log.TopicByID(rt.TopicID)
	if !ok {
		return "", false
	}
	return t.Name, true
}
