package partition

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sediment-io/sediment/config"
	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/record"
)

// Idempotent and transactional producer errors. They match the Kafka error
// the protocol layer answers (errors.As to *kerr.Error).
var (
	ErrOutOfOrderSequence = errors.New("partition: out of order sequence number")
	ErrInvalidEpoch       = fmt.Errorf("partition: invalid producer epoch: %w", kerr.InvalidProducerEpoch)
	// ErrInvalidTxnState refuses a non-transactional batch from a producer
	// with a transaction open in the partition.
	ErrInvalidTxnState = fmt.Errorf("partition: producer has a transaction open: %w", kerr.InvalidTxnState)
	// ErrCoordinatorFenced refuses a marker from a transaction coordinator
	// older than the one whose marker the partition last took.
	ErrCoordinatorFenced = fmt.Errorf("partition: stale transaction coordinator epoch: %w", kerr.TransactionCoordinatorFenced)
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

// producerMap is producer state by producer id.
type producerMap map[int64]*metadata.ProducerState

// producers is one partition's producer state (Kafka's
// ProducerStateManager): the idempotent state of every producer, and the
// transactions. Its owner serializes access (the partition lock for the
// live copy).
type producers struct {
	m producerMap
	// open maps each producer with a transaction open to the transaction's
	// first offset: the live index of the open-transaction table, which
	// the states in m hold too (TxnOpen, TxnFirst) and persist.
	open map[int64]int64
	// ending holds, in offset order, the transactions whose marker is
	// appended but not yet under the high watermark: as in Kafka they
	// still hold the last stable offset back, so that read_committed
	// consumers never read past a marker that could still be lost.
	ending []endingTxn
	// aborted is the aborted-transaction index (Kafka's .txnindex), in
	// marker order. The states in m leave their Aborted empty: they are
	// persisted in the segments' producer deltas instead.
	aborted []AbortedTxn
}

type endingTxn struct{ first, marker int64 }

func newProducers() producers {
	return producers{m: producerMap{}, open: map[int64]int64{}}
}

// loadProducers builds the state read back from metadata.
func loadProducers(list []metadata.ProducerState) producers {
	ps := newProducers()
	for i := range list {
		st := list[i]
		st.Batches = append([]metadata.ProducerBatch(nil), st.Batches...)
		for _, a := range st.Aborted {
			ps.aborted = append(ps.aborted, AbortedTxn{ProducerID: st.ID, FirstOffset: a.First, LastOffset: a.Last})
		}
		st.Aborted = nil
		if st.TxnOpen {
			ps.open[st.ID] = st.TxnFirst
		}
		ps.m[st.ID] = &st
	}
	sort.Slice(ps.aborted, func(i, j int) bool { return ps.aborted[i].LastOffset < ps.aborted[j].LastOffset })
	return ps
}

// list returns the state sorted by producer id.
func (ps *producers) list() []metadata.ProducerState {
	out := make([]metadata.ProducerState, 0, len(ps.m))
	for _, st := range ps.m {
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

// check decides whether data batch b may be appended. It returns the base
// offset of the original when b is a retried duplicate. logEverWritten says
// whether the partition ever held a record (KAFKA-15591: a never-written
// partition accepts only sequence 0 from an unknown producer). A producer
// the broker has not seen since expireBeforeMs is forgotten first, unless
// it has a transaction open: like Kafka, the broker then has no state for
// it and accepts its next batch at any sequence (and can no longer
// recognise a retry of its old batches).
func (ps *producers) check(b *record.Batch, logEverWritten bool, expireBeforeMs int64) (dupBase int64, dup bool, err error) {
	if b.ProducerID < 0 {
		return 0, false, nil
	}
	st := ps.m[b.ProducerID]
	if st != nil && !st.TxnOpen && st.LastTimeMs < expireBeforeMs {
		delete(ps.m, b.ProducerID)
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
	case st.TxnOpen && !b.Transactional():
		return 0, false, ErrInvalidTxnState
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

// checkMarker decides whether marker m may be appended, as Kafka's
// ProducerAppendInfo.appendEndTxnMarker does: a marker older than the
// producer's epoch, or from an older coordinator than the last marker's,
// is refused.
func (ps *producers) checkMarker(m Marker) error {
	st := ps.m[m.ProducerID]
	switch {
	case st == nil:
		return nil
	case m.ProducerEpoch < st.Epoch:
		return fmt.Errorf("%w: marker at epoch %d, producer %d is at %d", ErrInvalidEpoch, m.ProducerEpoch, m.ProducerID, st.Epoch)
	case m.CoordinatorEpoch < st.CoordEpoch:
		return fmt.Errorf("%w: marker from coordinator epoch %d, last was %d", ErrCoordinatorFenced, m.CoordinatorEpoch, st.CoordEpoch)
	}
	return nil
}

// txnKind is what a batch is to its producer's transaction.
type txnKind int8

const (
	txnNone   txnKind = iota // not transactional
	txnData                  // a batch of an open transaction
	txnCommit                // a commit marker
	txnAbort                 // an abort marker
)

// txnEffect is what an appended batch did to its producer's transaction,
// decided at the append and kept on its batchRef: the segment's producer
// delta is built from it.
type txnEffect struct {
	kind txnKind
	// first is, for txnData, the first offset of the transaction the batch
	// is in; for a marker, that of the transaction it ended, -1 when the
	// producer had none open (an empty or repeated marker).
	first      int64
	coordEpoch int32
}

// effect decides what batch b, appended at base, does to its producer's
// transaction. A control batch that is not a readable marker (only the
// broker writes them) changes nothing.
func (ps *producers) effect(b *record.Batch, base int64) txnEffect {
	if b.ProducerID < 0 || !b.Transactional() {
		return txnEffect{}
	}
	st := ps.m[b.ProducerID]
	first := int64(-1)
	if st != nil && st.TxnOpen {
		first = st.TxnFirst
	}
	if !b.Control() {
		if first < 0 {
			first = base
		}
		return txnEffect{kind: txnData, first: first}
	}
	cm, err := record.ReadMarker(b.Raw)
	if err != nil {
		return txnEffect{}
	}
	e := txnEffect{kind: txnAbort, first: first, coordEpoch: cm.CoordinatorEpoch}
	if cm.Commit {
		e.kind = txnCommit
	}
	return e
}

// update records that batch b was appended at base at nowMs (the broker's
// clock) and returns what it did to its producer's transaction. Call only
// after check (or checkMarker) accepted b as new.
func (ps *producers) update(b *record.Batch, base, nowMs int64) txnEffect {
	if b.ProducerID < 0 {
		return txnEffect{}
	}
	if ps.m[b.ProducerID] == nil && len(ps.m) >= maxProducersPerPartition {
		ps.evictOldest()
	}
	e := ps.effect(b, base)
	ps.m.apply(b, base, nowMs, e)
	ps.m[b.ProducerID].Aborted = nil // kept in ps.aborted
	switch e.kind {
	case txnData:
		ps.open[b.ProducerID] = e.first
	case txnCommit, txnAbort:
		if e.first < 0 {
			break
		}
		delete(ps.open, b.ProducerID)
		ps.ending = append(ps.ending, endingTxn{first: e.first, marker: base})
		if e.kind == txnAbort {
			ps.aborted = append(ps.aborted, AbortedTxn{ProducerID: b.ProducerID, FirstOffset: e.first, LastOffset: base})
		}
	}
	return e
}

// apply adds batch b, appended at base at nowMs with transactional effect
// e, to its producer's state.
func (m producerMap) apply(b *record.Batch, base, nowMs int64, e txnEffect) {
	if b.ProducerID < 0 {
		return
	}
	d := metadata.ProducerState{ID: b.ProducerID, Epoch: b.ProducerEpoch, LastTimeMs: nowMs, CoordEpoch: -1}
	if st := m[b.ProducerID]; st != nil {
		d.CoordEpoch = st.CoordEpoch
	}
	switch e.kind {
	case txnCommit, txnAbort:
		// As in Kafka, a marker moves the producer to its epoch (fencing
		// batches of older ones) and closes its transaction; it is no
		// batch of the producer's sequence.
		d.CoordEpoch = max(d.CoordEpoch, e.coordEpoch)
		if e.kind == txnAbort && e.first >= 0 {
			d.Aborted = []metadata.TxnRange{{First: e.first, Last: base}}
		}
	default:
		d.Batches = []metadata.ProducerBatch{{
			FirstSeq:   b.BaseSequence,
			LastSeq:    nextSeq(b.BaseSequence, b.NumRecords-1),
			BaseOffset: base,
			LastOffset: base + int64(b.NumRecords) - 1,
		}}
		if e.kind == txnData {
			d.TxnOpen, d.TxnFirst = true, e.first
		}
	}
	metadata.MergeProducer(m, d)
}

// settle drops the ending transactions whose marker is under hw: they no
// longer hold the last stable offset back.
func (ps *producers) settle(hw int64) {
	n := 0
	for n < len(ps.ending) && ps.ending[n].marker < hw {
		n++
	}
	if n > 0 {
		ps.ending = append(ps.ending[:0], ps.ending[n:]...)
	}
}

// firstUnstable returns the first offset of the oldest open or ending
// transaction, else limit.
func (ps *producers) firstUnstable(limit int64) int64 {
	for _, first := range ps.open {
		limit = min(limit, first)
	}
	for _, e := range ps.ending {
		limit = min(limit, e.first)
	}
	return limit
}

// pruneAborted drops the aborted transactions that ended before logStart.
func (ps *producers) pruneAborted(logStart int64) {
	n := 0
	for n < len(ps.aborted) && ps.aborted[n].LastOffset < logStart {
		n++
	}
	if n > 0 {
		ps.aborted = append(ps.aborted[:0:0], ps.aborted[n:]...)
	}
}

// abortedIn returns the aborted transactions overlapping offsets [from,
// to], sorted by first offset.
func (ps *producers) abortedIn(from, to int64) []AbortedTxn {
	var out []AbortedTxn
	for i := sort.Search(len(ps.aborted), func(i int) bool { return ps.aborted[i].LastOffset >= from }); i < len(ps.aborted); i++ {
		if a := ps.aborted[i]; a.FirstOffset <= to {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].FirstOffset < out[j].FirstOffset })
	return out
}

// expire forgets every producer not seen since beforeMs, except those with
// a transaction open, and returns how many it forgot.
func (ps *producers) expire(beforeMs int64) int {
	n := 0
	for id, st := range ps.m {
		if st.LastTimeMs < beforeMs && !st.TxnOpen {
			delete(ps.m, id)
			n++
		}
	}
	return n
}

func (ps *producers) evictOldest() {
	var oldest *metadata.ProducerState
	for _, st := range ps.m {
		if !st.TxnOpen && (oldest == nil || st.LastTimeMs < oldest.LastTimeMs) {
			oldest = st
		}
	}
	if oldest != nil {
		delete(ps.m, oldest.ID)
	}
}

// segmentProducers returns the producer delta of one uploaded segment: the
// producers that wrote in it, with their batches there, their
// transactional state at its end, and the transactions aborted in it.
func segmentProducers(refs []*batchRef, data [][]byte) []metadata.ProducerState {
	delta := producers{m: producerMap{}}
	for j, r := range refs {
		b := record.ReadHeader(data[j])
		delta.m.apply(&b, r.base, r.appendMs, r.txn)
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
			p.producers.pruneAborted(p.logStart)
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
