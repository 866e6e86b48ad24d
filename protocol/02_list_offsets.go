package protocol

// ListOffsets v1–v11 (v0 was removed in Kafka 4.0, KIP-896). Timestamps:
// -1 latest (the high watermark, or with isolation_level 1, read_committed,
// the last stable offset), -2 earliest (the log start offset), -3 the
// record with the largest timestamp (KIP-734), -4 earliest local (KIP-405:
// the same as earliest here), and >= 0 the first record whose timestamp is
// at least the one asked for (offset -1 and timestamp -1 when there is none, or, for
// read_committed, when it is at or past the last stable offset). -5 and -6
// (tiered-storage positions) answer -1: every record here is in the object
// store or on its way, so there is no separate tier to report. v4+ answers
// with the leader epoch of the offset (see listedEpoch) and fences with
// CurrentLeaderEpoch (-1: not given): FENCED_LEADER_EPOCH when older than
// the partition's, UNKNOWN_LEADER_EPOCH when newer. In a cluster a
// partition this broker does not own is NOT_LEADER_OR_FOLLOWER (see
// notLeaderCode).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/storage/partition"
)

func init() { register(kmsg.ListOffsets, 1, 11, handleListOffsets) }

func handleListOffsets(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.ListOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		t, _ := r.s.log.Topic(rt.Topic)
		for _, rp := range rt.Partitions {
			st.Partitions = append(st.Partitions, r.listOffset(t, rp, req.IsolationLevel))
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

func (r *request) listOffset(t *partition.Topic, rp kmsg.ListOffsetsRequestTopicPartition, isolation int8) kmsg.ListOffsetsResponseTopicPartition {
	sp := kmsg.NewListOffsetsResponseTopicPartition()
	sp.Partition, sp.Timestamp, sp.Offset, sp.LeaderEpoch = rp.Partition, -1, -1, -1
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
	code := int16(0)
	if rp.CurrentLeaderEpoch != -1 {
		code = leaderEpochCode(v.Current().Epoch, rp.CurrentLeaderEpoch)
	}
	earliest := rp.Timestamp == partition.TimestampEarliest || rp.Timestamp == partition.TimestampEarliestLocal
	if code == 0 && !earliest && v.Current().StartOffset > v.HighWatermark {
		// As in Kafka: the records before the current epoch are not all
		// durable yet, so the latest offset is not known.
		code = kerr.OffsetNotAvailable.Code
	}
	switch {
	case code != 0:
		sp.ErrorCode = r.code(code)
	case rp.Timestamp == -5 || rp.Timestamp == -6:
	default:
		off, ts, ok, err := r.s.log.OffsetForTime(r.ctx(), p, rp.Timestamp)
		if ok && isolation == readCommitted {
			off, ok = committedListing(p, rp.Timestamp, off)
		}
		if err != nil {
			sp.ErrorCode = r.codeOf(err)
		} else if ok {
			sp.Offset, sp.Timestamp, sp.LeaderEpoch = off, ts, listedEpoch(v, rp.Timestamp, off)
		}
	}
	return sp
}

// listedEpoch is the leader epoch answered with a listed offset, as Kafka's:
// the current epoch for the latest offset; for the earliest, the first
// epoch if it covers the log start; otherwise the epoch of the record found
// (the one its batch carries).
func listedEpoch(v partition.EpochView, ts, offset int64) int32 {
	switch ts {
	case partition.TimestampLatest:
		return v.Current().Epoch
	case partition.TimestampEarliest, partition.TimestampEarliestLocal:
		if len(v.Epochs.Entries) > 0 && v.Epochs.Entries[0].StartOffset <= v.LogStart {
			return v.Epochs.Entries[0].Epoch
		}
		return -1
	}
	if epoch, ok := v.Epochs.EpochForOffset(offset); ok {
		return epoch
	}
	return -1
}

// committedListing bounds a listed offset by the last stable offset for a
// read_committed client, as Kafka's Partition.fetchOffsetForTimestamp: the
// latest offset is the LSO, the earliest is answered as it is, and a
// record found by timestamp counts only below the LSO.
func committedListing(p *partition.Partition, ts, off int64) (int64, bool) {
	lso := p.LastStableOffset()
	switch ts {
	case partition.TimestampLatest:
		return lso, true
	case partition.TimestampEarliest, partition.TimestampEarliestLocal:
		return off, true
	}
	return off, off < lso
}
