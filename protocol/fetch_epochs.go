package protocol

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/partition"
)

// fetchEpochs checks a fetched partition's leader epochs (KIP-320) as
// Kafka's Partition.readRecords does, and returns p when it is to be read,
// or nil when sp is already the whole answer. CurrentLeaderEpoch (< 0: not
// given) fences with FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH.
// LastFetchedEpoch (v12+, < 0: not given) is the epoch of the last batch
// the client fetched: when that epoch ended before FetchOffset here, or is
// unknown but older epochs are, the log diverged from what the client read,
// and the answer is DivergingEpoch (the epoch and where it ended) with no
// records, at once; an epoch with no answer at all, or a FetchOffset below
// the log start, is OFFSET_OUT_OF_RANGE.
func (r *request) fetchEpochs(p *partition.Partition, rp kmsg.FetchRequestTopicPartition, sp *kmsg.FetchResponseTopicPartition) *partition.Partition {
	if rp.CurrentLeaderEpoch < 0 && rp.LastFetchedEpoch < 0 {
		return p
	}
	fail := func(code int16) *partition.Partition {
		sp.ErrorCode = r.code(code)
		sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
		return nil
	}
	if err := r.s.log.CheckLeader(p); err != nil { // epochs of a partition not led are not its owner's
		return fail(errorCode(err))
	}
	v := p.EpochView()
	if rp.CurrentLeaderEpoch >= 0 {
		if code := leaderEpochCode(v.Current().Epoch, rp.CurrentLeaderEpoch); code != 0 {
			return fail(code)
		}
	}
	if rp.LastFetchedEpoch < 0 {
		return p
	}
	return r.lastFetchedEpoch(p, v, rp, sp)
}

// lastFetchedEpoch checks the epoch of the last batch the client fetched
// against v (see fetchEpochs): p to read, or nil when sp is the answer.
func (r *request) lastFetchedEpoch(p *partition.Partition, v partition.EpochView, rp kmsg.FetchRequestTopicPartition, sp *kmsg.FetchResponseTopicPartition) *partition.Partition {
	epoch, end := v.Epochs.EndOffsetFor(rp.LastFetchedEpoch, v.LogEnd)
	switch {
	case epoch == metadata.UndefinedEpoch || end == metadata.UndefinedEpochOffset || rp.FetchOffset < v.LogStart:
		sp.ErrorCode = r.code(kerr.OffsetOutOfRange.Code)
		sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
		return nil
	case epoch < rp.LastFetchedEpoch || end < rp.FetchOffset:
		sp.DivergingEpoch.Epoch, sp.DivergingEpoch.EndOffset = epoch, end
		sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = v.HighWatermark, v.HighWatermark, v.LogStart
		return nil
	}
	return p
}

// replicaEpochs is fetchEpochs for a partition read as a replica: the
// client's current leader epoch was checked against the owner's
// (notLeaderCode), and its last fetched epoch is checked against the
// committed log's epochs below the committed end. At or past that end
// nothing is served, and below the log start the read answers
// OFFSET_OUT_OF_RANGE with the offsets a client needs, so nothing is
// checked there.
func (r *request) replicaEpochs(p *partition.Partition, rp kmsg.FetchRequestTopicPartition, sp *kmsg.FetchResponseTopicPartition) *partition.Partition {
	if rp.LastFetchedEpoch < 0 {
		return p
	}
	v, err := r.s.log.ReplicaEpochView(r.ctx(), p, rp.FetchOffset)
	if err != nil {
		sp.ErrorCode = r.code(errorCode(err))
		sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
		return nil
	}
	if rp.FetchOffset >= v.LogEnd || rp.FetchOffset < v.LogStart { // the read answers
		return p
	}
	return r.lastFetchedEpoch(p, v, rp, sp)
}
