package partition

import (
	"errors"
	"math"
	"sort"

	"github.com/sediment-io/sediment/metadata"
)

// Idempotent-producer errors, mapped by the protocol layer to Kafka codes.
var (
	ErrOutOfOrderSequence = errors.New("partition: out of order sequence number")
	ErrInvalidEpoch       = errors.New("partition: invalid producer epoch")
)

// producerWindow is how many of a producer's latest batches a partition
// remembers to answer retried duplicates (Kafka: 5, the client's maximum in
// flight requests).
const producerWindow = 5

// maxProducersPerPartition bounds producer state per partition: the least
// recently used producer is forgotten beyond it (its next batch is then
// accepted with any sequence, as Kafka does for unknown producers).
const maxProducersPerPartition = 2048

// producers is one partition's idempotent producer state. Its owner
// serializes access (the partition lock for the live copy, the uploader for
// the committed copy).
type producers map[int64]*metadata.ProducerState

func loadProducers(list []metadata.ProducerState) producers {
	ps := make(producers, len(list))
	for i := range list {
		st := list[i]
		st.Batches = append([]metadata.ProducerBatch(nil), st.Batches...)
		ps[st.ID] = &st
	}
	return ps
}

// snapshot returns the state as a sorted list for metadata.
func (ps producers) snapshot() []metadata.ProducerState {
	out := make([]metadata.ProducerState, 0, len(ps))
	for _, st := range ps {
		c := *st
		c.Batches = append([]metadata.ProducerBatch(nil), st.Batches...)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// nextSeq adds n to a sequence number, wrapping past MaxInt32 to 0 as Kafka
// does.
func nextSeq(seq, n int32) int32 {
	return int32((int64(seq) + int64(n)) % (math.MaxInt32 + 1))
}

// check decides whether batch b may be appended. It returns the base offset
// of the original when b is a retried duplicate. logEverWritten says whether
// the partition ever held a record (KAFKA-15591: a never-written partition
// accepts only sequence 0 from an unknown producer).
func (ps producers) check(b *Batch, logEverWritten bool) (dupBase int64, dup bool, err error) {
	if b.ProducerID < 0 {
		return 0, false, nil
	}
	st := ps[b.ProducerID]
	switch {
	case st == nil:
		if !logEverWritten && b.BaseSequence != 0 {
			return 0, false, ErrOutOfOrderSequence
		}
		return 0, false, nil
	case b.ProducerEpoch < st.Epoch:
		return 0, false, ErrInvalidEpoch
	case b.ProducerEpoch > st.Epoch:
		if b.BaseSequence != 0 {
			return 0, false, ErrOutOfOrderSequence
		}
		return 0, false, nil
	}
	last := nextSeq(b.BaseSequence, b.NumRecords-1)
	for _, pb := range st.Batches {
		if pb.FirstSeq == b.BaseSequence && pb.LastSeq == last {
			return pb.BaseOffset, true, nil
		}
	}
	if n := len(st.Batches); n > 0 && b.BaseSequence != nextSeq(st.Batches[n-1].LastSeq, 1) {
		return 0, false, ErrOutOfOrderSequence
	}
	return 0, false, nil
}

// update records that batch b was appended at base. Call only after check
// accepted b as new.
func (ps producers) update(b *Batch, base int64) {
	if b.ProducerID < 0 {
		return
	}
	st := ps[b.ProducerID]
	if st == nil || st.Epoch != b.ProducerEpoch {
		if st == nil && len(ps) >= maxProducersPerPartition {
			ps.evictOldest()
		}
		st = &metadata.ProducerState{ID: b.ProducerID, Epoch: b.ProducerEpoch}
		ps[b.ProducerID] = st
	}
	st.LastTimeMs = b.MaxTimestamp
	st.Batches = append(st.Batches, metadata.ProducerBatch{
		FirstSeq:   b.BaseSequence,
		LastSeq:    nextSeq(b.BaseSequence, b.NumRecords-1),
		BaseOffset: base,
		LastOffset: base + int64(b.NumRecords) - 1,
	})
	if len(st.Batches) > producerWindow {
		st.Batches = append(st.Batches[:0], st.Batches[len(st.Batches)-producerWindow:]...)
	}
}

func (ps producers) evictOldest() {
	var oldest *metadata.ProducerState
	for _, st := range ps {
		if oldest == nil || st.LastTimeMs < oldest.LastTimeMs {
			oldest = st
		}
	}
	if oldest != nil {
		delete(ps, oldest.ID)
	}
}
