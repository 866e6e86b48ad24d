package partition

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/sediment-io/sediment/config"
	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/record"
)

// Idempotent-producer errors, mapped by the protocol layer to Kafka codes.
var (
	ErrOutOfOrderSequence = errors.New("partition: out of order sequence number")
	ErrInvalidEpoch       = errors.New("partition: invalid producer epoch")
)

// maxProducersPerPartition bounds the producer state one partition holds
// in memory, as a safety valve under producer.id.expiration.ms: past it the
// producer the broker saw least recently is forgotten (its next batch is
// then accepted with any sequence, as Kafka does for a producer it has no
// state for).
const maxProducersPerPartition = 1 << 18

// foldMinDeltas is how many producer deltas a partition accumulates before
// compaction folds them into a snapshot: folding rewrites the whole
// producer table, so it is done once per many commits, not per commit.
const foldMinDeltas = 16

// producers is one partition's idempotent producer state. Its owner
// serializes access (the partition lock for the live copy; the uploader
// owns the per-segment copies it builds).
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

// list returns the state sorted by producer id.
func (ps producers) list() []metadata.ProducerState {
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
// accepts only sequence 0 from an unknown producer). A producer the broker
// has not seen since expireBeforeMs is forgotten first: like Kafka, the
// broker then has no state for it and accepts its next batch at any
// sequence (and can no longer recognise a retry of its old batches).
func (ps producers) check(b *record.Batch, logEverWritten bool, expireBeforeMs int64) (dupBase int64, dup bool, err error) {
	if b.ProducerID < 0 {
		return 0, false, nil
	}
	st := ps[b.ProducerID]
	if st != nil && st.LastTimeMs < expireBeforeMs {
		delete(ps, b.ProducerID)
		st = nil
	}
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

// update records that batch b was appended at base at nowMs (the broker's
// clock). Call only after check accepted b as new.
func (ps producers) update(b *record.Batch, base, nowMs int64) {
	if b.ProducerID >= 0 && ps[b.ProducerID] == nil && len(ps) >= maxProducersPerPartition {
		ps.evictOldest()
	}
	ps.record(b, base, nowMs)
}

// record adds batch b, appended at base at nowMs, to its producer's state.
func (ps producers) record(b *record.Batch, base, nowMs int64) {
	if b.ProducerID < 0 {
		return
	}
	d := metadata.ProducerState{ID: b.ProducerID, Epoch: b.ProducerEpoch, LastTimeMs: nowMs,
		Batches: []metadata.ProducerBatch{{
			FirstSeq:   b.BaseSequence,
			LastSeq:    nextSeq(b.BaseSequence, b.NumRecords-1),
			BaseOffset: base,
			LastOffset: base + int64(b.NumRecords) - 1,
		}}}
	metadata.MergeProducer(ps, d)
}

// expire forgets every producer not seen since beforeMs and returns how
// many it forgot.
func (ps producers) expire(beforeMs int64) int {
	n := 0
	for id, st := range ps {
		if st.LastTimeMs < beforeMs {
			delete(ps, id)
			n++
		}
	}
	return n
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

// segmentProducers returns the producer delta of one uploaded segment: the
// producers that wrote in it, with their batches there.
func segmentProducers(refs []*batchRef, data [][]byte) []metadata.ProducerState {
	delta := producers{}
	for j, r := range refs {
		b := record.ReadHeader(data[j])
		delta.record(&b, r.base, r.appendMs)
	}
	return delta.list()
}

// now is the broker's clock (Options.Now).
func (l *Log) now() time.Time { return l.opts.Now() }

// producerExpireBefore is the broker time before which a producer last
// seen is expired under producer.id.expiration.ms.
func (l *Log) producerExpireBefore() int64 {
	return l.now().UnixMilli() - l.producerExpiration.Load()
}

// setProducerExpiration applies producer.id.expiration.ms from the
// broker's dynamic configs (validated on the way in).
func (l *Log) setProducerExpiration(broker map[string]string) {
	l.producerExpiration.Store(config.Broker(broker).Int("producer.id.expiration.ms"))
}

// expireProducers forgets, in every partition, the producers idle past
// producer.id.expiration.ms (Kafka checks every
// producer.id.expiration.check.interval.ms; here every maintenance pass),
// and folds each partition's producer deltas once enough have piled up.
func (l *Log) expireProducers(ctx context.Context) error {
	before := l.producerExpireBefore()
	var errs []error
	for _, t := range l.Topics() {
		for _, p := range t.Partitions() {
			if ctx.Err() != nil {
				return errors.Join(errs...)
			}
			fence, owned := p.maintainedFence()
			if !owned {
				continue
			}
			p.mu.Lock()
			p.producers.expire(before)
			committed := p.committed
			p.mu.Unlock()
			if committed == p.foldedAt {
				continue // no commit, so no new delta, since the last check
			}
			if _, err := l.meta.FoldProducers(ctx, t.ID, p.index, foldMinDeltas, before, fence...); err != nil {
				errs = append(errs, fmt.Errorf("%s/%d: %w", t.Name, p.index, err))
				continue
			}
			p.foldedAt = committed
		}
	}
	return errors.Join(errs...)
}
