package protocol

// OffsetForLeaderEpoch v2–v4 (v0–v1 were removed in Kafka 4.0, KIP-896).
// Consumers ask it (KIP-320) to validate a position that carries a leader
// epoch: a listed or committed offset, or the last fetched record after a
// leader change. The answer for an epoch is where it ended, from the
// partition's leader-epoch history, exactly as Kafka's
// LeaderEpochFileCache.endOffsetFor: the current epoch ends at the log end
// offset; an older epoch is answered with the largest epoch at or below it,
// ending where the next higher epoch starts; an epoch below the first one
// (or below the log start, whose epochs are forgotten) is answered with
// itself, ending where the first remaining epoch starts; an epoch above the
// current one, or -1, gets epoch -1 and offset -1. CurrentLeaderEpoch
// (-1: not given) fences a stale client with FENCED_LEADER_EPOCH and a
// client ahead of this broker with UNKNOWN_LEADER_EPOCH. ReplicaId is
// ignored, as in Kafka: a broker answers only for the partitions it leads
// (all of them on one node; in a cluster the others are
// NOT_LEADER_OR_FOLLOWER, see notLeaderCode).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/storage/partition"
)

func init() { register(kmsg.OffsetForLeaderEpoch, 2, 4, handleOffsetForLeaderEpoch) }

func handleOffsetForLeaderEpoch(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.OffsetForLeaderEpochRequest)
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		t, _ := r.s.log.Topic(rt.Topic)
		for _, rp := range rt.Partitions {
			st.Partitions = append(st.Partitions, r.epochEndOffset(t, rp))
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

func (r *request) epochEndOffset(t *partition.Topic, rp kmsg.OffsetForLeaderEpochRequestTopicPartition) kmsg.OffsetForLeaderEpochResponseTopicPartition {
	sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition() // epoch -1, end offset -1
	sp.Partition = rp.Partition
	var p *partition.Partition
	if t != nil {
		p = t.Partition(rp.Partition)
	}
	if p == nil {
		sp.ErrorCode = r.code(kerr.UnknownTopicOrPartition.Code)
		return sp
	}
	if code := r.s.notLeaderCode(t, rp.Partition, rp.CurrentLeaderEpoch); code != 0 {
		sp.ErrorCode = r.code(code)
		return sp
	}
	if err := r.s.log.CheckLeader(p); err != nil { // the view may run ahead of the log's own hand-over
		sp.ErrorCode = r.code(errorCode(err))
		return sp
	}
	v := p.EpochView()
	if rp.CurrentLeaderEpoch != -1 {
		if code := leaderEpochCode(v.Current().Epoch, rp.CurrentLeaderEpoch); code != 0 {
			sp.ErrorCode = r.code(code)
			return sp
		}
	}
	sp.LeaderEpoch, sp.EndOffset = v.Epochs.EndOffsetFor(rp.LeaderEpoch, v.LogEnd)
	return sp
}

// leaderEpochCode fences a request made at the client's idea of the current
// leader epoch, as Kafka's Partition.checkCurrentLeaderEpoch does: an older
// epoch is FENCED_LEADER_EPOCH (the client missed a change of leader), a
// newer one UNKNOWN_LEADER_EPOCH (this broker has not caught up with it).
func leaderEpochCode(current, asked int32) int16 {
	switch {
	case asked < current:
		return kerr.FencedLeaderEpoch.Code
	case asked > current:
		return kerr.UnknownLeaderEpoch.Code
	}
	return 0
}
