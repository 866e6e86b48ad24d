package metadata

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"
)

// Idempotent-producer state of a partition is stored as what changed, never
// as the whole table on every commit:
//
//	producers/<topic-id-hex>/<partition %010d>/delta/<base offset %020d>/<chunk %04d>
//	    the producers that wrote in the segment at base offset (CommitSegments)
//	producers/<topic-id-hex>/<partition %010d>/snap/<generation %020d>/<chunk %06d>
//	    every producer as of the deltas folded so far (FoldProducers)
//	producers/<topic-id-hex>/<partition %010d>/head
//	    producerHead: which snapshot generation is current
//
// The state is the snapshot with every delta applied in offset order. A
// commit writes one delta value per partition (more only for a segment
// whose producers need more than maxProducerValue), so what it writes grows
// with the producers in the segment, not with those the partition knows.
// Compaction folds deltas into a new snapshot generation, the way Kafka
// snapshots producer state at a segment roll, and drops producers idle past
// producer.id.expiration.ms on the broker's clock.

// ProducerWindow is how many of a producer's latest batches a partition
// remembers to answer retried duplicates (Kafka: 5, the client's maximum
// in-flight requests).
const ProducerWindow = 5

// foldMaxDeltas bounds the deltas one fold removes, so that its final
// transaction stays within etcd's default of 128 operations.
const foldMaxDeltas = 100

// producerHead names the current snapshot generation and its chunk count.
type producerHead struct {
	Gen    int64 `json:"gen"`
	Chunks int   `json:"chunks"`
}

func producerPrefix(id TopicID) string { return "producers/" + id.String() + "/" }

func producerPartPrefix(id TopicID, p int32) string {
	return fmt.Sprintf("%s%010d/", producerPrefix(id), p)
}

func producerHeadKey(id TopicID, p int32) string { return producerPartPrefix(id, p) + "head" }

func producerDeltaPrefix(id TopicID, p int32) string { return producerPartPrefix(id, p) + "delta/" }

func producerDeltaKey(id TopicID, p int32, base int64, chunk int) string {
	return fmt.Sprintf("%s%020d/%04d", producerDeltaPrefix(id, p), base, chunk)
}

func producerSnapPrefix(id TopicID, p int32, gen int64) string {
	return fmt.Sprintf("%ssnap/%020d/", producerPartPrefix(id, p), gen)
}

func producerSnapKey(id TopicID, p int32, gen int64, chunk int) string {
	return fmt.Sprintf("%s%06d", producerSnapPrefix(id, p, gen), chunk)
}

// MergeProducer applies d, one producer's batches in a later part of the
// log, to the state in m: the same epoch continuing the sequence appends
// and keeps the last ProducerWindow batches; anything else (an unknown
// producer, a new epoch, or a producer that resumed at another sequence
// after the broker had forgotten it) starts the batches over, so that
// state rebuilt from deltas is the state the live partition had. The
// transactional state is d's (it is the later one), except that the
// coordinator epoch never falls and aborted transactions accumulate.
func MergeProducer(m map[int64]*ProducerState, d ProducerState) {
	st := m[d.ID]
	if st == nil || st.Epoch != d.Epoch || !continues(st.Batches, d.Batches) {
		c := d
		c.Batches = append([]ProducerBatch(nil), d.Batches...)
		c.Aborted = nil
		if st != nil {
			c.CoordEpoch = max(c.CoordEpoch, st.CoordEpoch)
			c.Aborted = append(c.Aborted, st.Aborted...)
		}
		c.Aborted = append(c.Aborted, d.Aborted...)
		m[d.ID] = &c
		return
	}
	st.LastTimeMs = max(st.LastTimeMs, d.LastTimeMs)
	st.Batches = append(st.Batches, d.Batches...)
	if n := len(st.Batches); n > ProducerWindow {
		st.Batches = append(st.Batches[:0], st.Batches[n-ProducerWindow:]...)
	}
	st.CoordEpoch = max(st.CoordEpoch, d.CoordEpoch)
	st.TxnOpen, st.TxnFirst = d.TxnOpen, d.TxnFirst
	st.Aborted = append(st.Aborted, d.Aborted...)
}

// continues reports whether next's first batch follows prev's last in
// sequence (wrapping past MaxInt32 to 0, as Kafka does).
func continues(prev, next []ProducerBatch) bool {
	if len(prev) == 0 || len(next) == 0 {
		return true
	}
	want := (int64(prev[len(prev)-1].LastSeq) + 1) % (math.MaxInt32 + 1)
	return int64(next[0].FirstSeq) == want
}

// sortedProducers returns m's states by producer id, leaving out those idle
// since before expireBeforeMs. As in Kafka, a producer with a transaction
// open never expires; nor does one whose aborted transactions are still
// in the log, which read_committed consumers need.
func sortedProducers(m map[int64]*ProducerState, expireBeforeMs int64) []ProducerState {
	out := make([]ProducerState, 0, len(m))
	for _, st := range m {
		if st.LastTimeMs >= expireBeforeMs || st.TxnOpen || len(st.Aborted) > 0 {
			out = append(out, *st)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// pruneAborted drops the aborted transactions that ended before logStart:
// no consumer can read their records any more.
func pruneAborted(m map[int64]*ProducerState, logStart int64) {
	for _, st := range m {
		n := 0
		for n < len(st.Aborted) && st.Aborted[n].Last < logStart {
			n++
		}
		if n == len(st.Aborted) {
			st.Aborted = nil
		} else if n > 0 {
			st.Aborted = append([]TxnRange(nil), st.Aborted[n:]...)
		}
	}
}

// ProducerStates returns a partition's idempotent-producer state as of its
// committed end (the snapshot with every delta applied), sorted by producer
// id. State in the encoding before deltas (a PartitionState's Producers)
// is read too; its times were the producers' own, so they count from now.
// Call it while nothing folds the partition (at load): a fold that removes
// the generation being read fails the read, never returns a wrong state.
func (s *Store) ProducerStates(ctx context.Context, id TopicID, p int32) ([]ProducerState, error) {
	// The snapshot and the deltas are read in separate requests, and a fold
	// may move deltas into a new snapshot between them: the deltas read
	// would then miss what the old snapshot did not hold yet. Every fold
	// rewrites the head, so a read that saw the same head version before
	// and after is consistent; otherwise it is read again.
	const attempts = 8
	for range attempts {
		list, stable, err := s.producerStatesOnce(ctx, id, p)
		if stable {
			return list, err
		}
	}
	return nil, fmt.Errorf("metadata: producer state of %s/%d: folded under %d reads in a row", id, p, attempts)
}

// producerStatesOnce reads the producer state once; stable is false when
// the snapshot's head changed while it read (the result is then dropped).
func (s *Store) producerStatesOnce(ctx context.Context, id TopicID, p int32) (list []ProducerState, stable bool, err error) {
	m := map[int64]*ProducerState{}
	st, _, err := s.PartitionState(ctx, id, p)
	if err != nil {
		return nil, true, err
	}
	now := time.Now().UnixMilli()
	for _, ps := range st.Producers {
		ps.LastTimeMs, ps.CoordEpoch = now, -1
		MergeProducer(m, ps)
	}
	before, err := s.headVersion(ctx, id, p)
	if err != nil {
		return nil, true, err
	}
	_, _, err = s.loadProducerSnapshot(ctx, id, p, m)
	var deltas []Item
	if err == nil {
		deltas, err = s.kv.Range(ctx, producerDeltaPrefix(id, p), PrefixEnd(producerDeltaPrefix(id, p)), 0, false)
	}
	after, herr := s.headVersion(ctx, id, p)
	if herr != nil {
		return nil, true, herr
	}
	if after != before {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	if err := mergeItems(m, deltas); err != nil {
		return nil, true, err
	}
	return sortedProducers(m, 0), true, nil
}

// headVersion is the version of the partition's producer snapshot head (0:
// no snapshot yet).
func (s *Store) headVersion(ctx context.Context, id TopicID, p int32) (int64, error) {
	it, ok, err := s.kv.Get(ctx, producerHeadKey(id, p))
	if err != nil || !ok {
		return 0, err
	}
	return it.Version, nil
}

// loadProducerSnapshot merges the current snapshot into m and returns its
// head and the head's version (0: no snapshot yet).
func (s *Store) loadProducerSnapshot(ctx context.Context, id TopicID, p int32, m map[int64]*ProducerState) (producerHead, int64, error) {
	var head producerHead
	hv, ok, err := s.getJSON(ctx, producerHeadKey(id, p), &head)
	if err != nil || !ok {
		return head, 0, err
	}
	prefix := producerSnapPrefix(id, p, head.Gen)
	items, err := s.kv.Range(ctx, prefix, PrefixEnd(prefix), 0, false)
	if err != nil {
		return head, 0, err
	}
	if len(items) != head.Chunks {
		return head, 0, fmt.Errorf("metadata: producer snapshot %s: %d of %d chunks (a fold replaced it meanwhile?)",
			prefix, len(items), head.Chunks)
	}
	return head, hv, mergeItems(m, items)
}

func mergeItems(m map[int64]*ProducerState, items []Item) error {
	for _, it := range items {
		list, err := decodeProducers(it.Value)
		if err != nil {
			return fmt.Errorf("%w (key %s)", err, it.Key)
		}
		for _, d := range list {
			MergeProducer(m, d)
		}
	}
	return nil
}

// producerDeltaOps writes the producers that changed in seg.
func producerDeltaOps(seg Segment, changed []ProducerState) []Op {
	list := append([]ProducerState(nil), changed...)
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	var ops []Op
	for i, c := range chunkProducers(list, maxProducerValue) {
		ops = append(ops, Put(producerDeltaKey(seg.Topic, seg.Partition, seg.BaseOffset, i), c))
	}
	return ops
}

// migrateProducerOps rewrites the state of the old encoding (the whole
// table in the PartitionState) as the first snapshot generation. The
// condition on the head keeps it from replacing a snapshot.
func migrateProducerOps(id TopicID, p int32, legacy []ProducerState) ([]Cond, []Op) {
	now := time.Now().UnixMilli()
	list := make([]ProducerState, len(legacy))
	for i, st := range legacy {
		st.LastTimeMs = now // the old times were the producers' own clocks
		st.CoordEpoch = -1
		list[i] = st
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	chunks := chunkProducers(list, maxProducerValue)
	ops := []Op{putJSON(producerHeadKey(id, p), producerHead{Gen: 1, Chunks: len(chunks)})}
	for i, c := range chunks {
		ops = append(ops, Put(producerSnapKey(id, p, 1, i), c))
	}
	return []Cond{{Key: producerHeadKey(id, p), Version: 0}}, ops
}
