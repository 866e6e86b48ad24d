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
	epoch, end := v.Epochs.EndOffsetFor(rp.LastFetchedEpoch, v.LogEnd)
	switch {
	case epoch == metadata.UndefinedEpoch || end == metadata.UndefinedEpochOffset || rp.FetchOffset < v.LogStart:
		return fail(kerr.OffsetOutOfRange.Code)
	case epoch < rp.LastFetchedEpoch || end < rp.FetchOffset:
		sp.DivergingEpoch.Epoch, sp.DivergingEpoch.EndOffset = epoch, end
		sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = v.HighWatermark, v.HighWatermark, v.LogStart
		return nil
	}
	return p
}
