package partition

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sediment-io/sediment/internal/testwait"
	"github.com/sediment-io/sediment/storage/record"
)

const attrTxn = 0x10

// txnBatch is one record of a transactional producer.
func txnBatch(pid int64, epoch int16, seq int32, v string) testBatch {
	return testBatch{values: [][]byte{[]byte(v)}, pid: pid, epoch: epoch, seq: seq, attributes: attrTxn}
}

// plainBatch is one record of an idempotent, non-transactional producer.
func plainBatch(pid int64, seq int32, v string) testBatch {
	return testBatch{values: [][]byte{[]byte(v)}, pid: pid, seq: seq}
}

// txnOpts runs the uploader on its own, often, so that object durability
// acknowledges without the test driving uploads.
func txnOpts(d Durability) func(*Options) {
	return func(o *Options) { o.Durability = d; o.UploadInterval = 5 * time.Millisecond }
}

func marker(t *testing.T, l *Log, p *Partition, pid int64, epoch int16, commit bool, coord int32) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	off, err := l.WriteMarker(ctx, p, Marker{ProducerID: pid, ProducerEpoch: epoch, Commit: commit, CoordinatorEpoch: coord})
	if err != nil {
		t.Fatalf("marker for producer %d (commit %v): %v", pid, commit, err)
	}
	return off
}

func produceWait(t *testing.T, l *Log, p *Partition, tb testBatch) int64 {
	t.Helper()
	res, err := l.Append(context.Background(), p, tb.encode())
	if err != nil {
		t.Fatalf("append %q: %v", tb.values[0], err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.Wait(ctx, res); err != nil {
		t.Fatalf("wait %q: %v", tb.values[0], err)
	}
	return res.BaseOffset
}

// committedView is what a read_committed consumer of p sees from offset 0:
// it reads with ReadCommitted and drops the control batches and every
// batch of an aborted transaction the answers list, as Kafka clients do.
type committedView struct {
	values  []string // in offset order
	aborted []AbortedTxn
	end     int64 // where the reads stopped
}

func readCommittedAll(t *testing.T, l *Log, p *Partition) committedView {
	t.Helper()
	off, _ := p.Offsets()
	return readCommittedVia(t, l.ReadCommitted, p, off)
}

// readFunc is one of the Log's read paths (ReadCommitted, ReadReplicaCommitted).
type readFunc func(ctx context.Context, p *Partition, offset int64, maxBytes int, first bool) (FetchResult, error)

// readCommittedVia is readCommittedAll through read, from offset off.
func readCommittedVia(t *testing.T, read readFunc, p *Partition, off int64) committedView {
	t.Helper()
	var v committedView
	seen := map[AbortedTxn]bool{}
	for range 1000 {
		res, err := read(context.Background(), p, off, 1<<20, true)
		if err != nil {
			t.Fatalf("read committed at %d: %v", off, err)
		}
		batches := batchesOf(t, res)
		if len(batches) == 0 {
			v.end = off
			return v
		}
		if !sort.SliceIsSorted(res.Aborted, func(i, j int) bool { return res.Aborted[i].FirstOffset < res.Aborted[j].FirstOffset }) {
			t.Fatalf("aborted transactions not sorted by first offset: %+v", res.Aborted)
		}
		last := record.LastOffset(batches[len(batches)-1])
		for _, a := range res.Aborted {
			if a.LastOffset < off || a.FirstOffset > last {
				t.Fatalf("aborted %+v does not overlap the answer [%d, %d]", a, off, last)
			}
			if !seen[a] {
				seen[a] = true
				v.aborted = append(v.aborted, a)
			}
		}
		for _, raw := range batches {
			b := record.ReadHeader(raw)
			base := record.BaseOffset(raw)
			if record.LastOffset(raw) >= res.LastStableOffset {
				t.Fatalf("batch [%d, %d] at or past the last stable offset %d", base, record.LastOffset(raw), res.LastStableOffset)
			}
			off = record.LastOffset(raw) + 1
			if b.Control() {
				continue
			}
			dropped := false
			for _, a := range res.Aborted {
				if a.ProducerID == b.ProducerID && b.Transactional() && base >= a.FirstOffset && base < a.LastOffset {
					dropped = true
				}
			}
			if !dropped {
				for o := base; o <= record.LastOffset(raw); o++ {
					v.values = append(v.values, string(recordValues(t, raw)[o]))
				}
			}
		}
	}
	t.Fatal("read committed did not reach the end")
	return v
}

func durabilityModes() []Durability { return []Durability{DurabilityWAL, DurabilityObject} }

// TestTxnMarkersAndLSO: transactional and plain producers interleave; the
// last stable offset stays at the oldest open transaction's first offset
// until its marker is durable; read_committed sees exactly the committed
// and plain records, never data at or past the last stable offset, and
// the aborted transactions overlapping each answer.
func TestTxnMarkersAndLSO(t *testing.T) {
	for _, d := range durabilityModes() {
		t.Run(durabilityName(d), func(t *testing.T) {
			l := newLogEnv(t, txnOpts(d)).open()
			p := createTopic(t, l, "t", 1, nil).Partition(0)

			produceWait(t, l, p, plainBatch(9, 0, "plain0"))        // 0
			first7 := produceWait(t, l, p, txnBatch(7, 0, 0, "c1")) // 1: producer 7 opens a transaction
			produceWait(t, l, p, plainBatch(9, 1, "plain1"))        // 2
			first8 := produceWait(t, l, p, txnBatch(8, 0, 0, "a1")) // 3: producer 8 opens one
			produceWait(t, l, p, txnBatch(7, 0, 1, "c2"))           // 4
			produceWait(t, l, p, txnBatch(8, 0, 1, "a2"))           // 5
			if lso := p.LastStableOffset(); lso != first7 {
				t.Fatalf("last stable offset %d with transactions open at %d and %d", lso, first7, first8)
			}
			if !p.HasOpenTxn(7, 0) || p.HasOpenTxn(7, 1) || p.HasOpenTxn(9, 0) {
				t.Fatal("HasOpenTxn wrong")
			}
			v := readCommittedAll(t, l, p)
			if !reflect.DeepEqual(v.values, []string{"plain0"}) || v.end != first7 {
				t.Fatalf("read committed with both open: %+v", v)
			}

			// A retried transactional batch is still a duplicate.
			if res, err := l.Append(context.Background(), p, txnBatch(7, 0, 1, "c2").encode()); err != nil || !res.Duplicate || res.BaseOffset != 4 {
				t.Fatalf("retried transactional batch: %+v, %v", res, err)
			}
			// A plain batch from a producer with a transaction open is refused.
			if _, err := l.Append(context.Background(), p, plainBatch(7, 2, "bad").encode()); !errors.Is(err, kerr.InvalidTxnState) {
				t.Fatalf("plain batch inside a transaction: %v", err)
			}

			commit := marker(t, l, p, 7, 0, true, 0) // 6
			if lso := p.LastStableOffset(); lso != first8 {
				t.Fatalf("last stable offset %d after the commit, want producer 8's %d", lso, first8)
			}
			abort := marker(t, l, p, 8, 0, false, 0) // 7
			_, hw := p.Offsets()
			if lso := p.LastStableOffset(); lso != hw || hw != abort+1 {
				t.Fatalf("last stable offset %d, high watermark %d after both markers (abort at %d)", lso, hw, abort)
			}
			if commit != 6 || abort != 7 {
				t.Fatalf("markers at %d and %d", commit, abort)
			}
			produceWait(t, l, p, plainBatch(9, 2, "plain2"))
			v = readCommittedAll(t, l, p)
			want := []string{"plain0", "c1", "plain1", "c2", "plain2"}
			if !reflect.DeepEqual(v.values, want) {
				t.Fatalf("read committed %v, want %v", v.values, want)
			}
			if wantAb := []AbortedTxn{{ProducerID: 8, FirstOffset: first8, LastOffset: abort}}; !reflect.DeepEqual(v.aborted, wantAb) {
				t.Fatalf("aborted %+v, want %+v", v.aborted, wantAb)
			}
			// A read starting past the aborted transaction does not list it.
			res, err := l.ReadCommitted(context.Background(), p, abort+1, 1<<20, true)
			if err != nil || len(res.Aborted) != 0 || res.LastStableOffset != abort+2 {
				t.Fatalf("read after the abort: aborted %+v, LSO %d, err %v", res.Aborted, res.LastStableOffset, err)
			}
			// read_uncommitted still sees everything.
			if got := readAll(t, l, p, 0); len(got) != 9 {
				t.Fatalf("read uncommitted: %d records, want 9", len(got))
			}
			if got := p.Producers(); len(got) != 3 || got[0].ProducerID != 7 || got[0].CurrentTxnStartOffset != -1 || got[0].LastSequence != 1 {
				t.Fatalf("producers %+v", got)
			}
		})
	}
}

// TestTxnFencing: Kafka's epoch rules for markers and the batches after
// them.
func TestTxnFencing(t *testing.T) {
	l := newLogEnv(t, txnOpts(DurabilityWAL)).open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	produceWait(t, l, p, txnBatch(7, 3, 0, "zombie"))
	// The coordinator fences the producer: an abort at the next epoch.
	marker(t, l, p, 7, 4, false, 2)
	if _, err := l.Append(context.Background(), p, txnBatch(7, 3, 1, "late").encode()); !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("fenced producer's batch: %v", err)
	}
	ctx := context.Background()
	if _, err := l.WriteMarker(ctx, p, Marker{ProducerID: 7, ProducerEpoch: 3, CoordinatorEpoch: 2}); !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("marker at an old epoch: %v", err)
	}
	if _, err := l.WriteMarker(ctx, p, Marker{ProducerID: 7, ProducerEpoch: 4, CoordinatorEpoch: 1}); !errors.Is(err, kerr.TransactionCoordinatorFenced) {
		t.Fatalf("marker from an old coordinator: %v", err)
	}
	// A repeated marker is written and changes nothing.
	marker(t, l, p, 7, 4, false, 2)
	_, hw := p.Offsets()
	if p.LastStableOffset() != hw {
		t.Fatalf("last stable offset %d, high watermark %d", p.LastStableOffset(), hw)
	}
	// The producer, re-initialised at the new epoch, starts a new transaction.
	off := produceWait(t, l, p, txnBatch(7, 4, 0, "fresh"))
	if p.LastStableOffset() != off || !p.HasOpenTxn(7, 4) {
		t.Fatalf("last stable offset %d, want %d", p.LastStableOffset(), off)
	}
	marker(t, l, p, 7, 4, true, 2)
	v := readCommittedAll(t, l, p)
	if !reflect.DeepEqual(v.values, []string{"fresh"}) || len(v.aborted) != 1 || v.aborted[0].FirstOffset != 0 {
		t.Fatalf("read committed %+v", v)
	}
	// Nothing the refused requests sent was written.
	if got := readAll(t, l, p, 0); len(got) != 5 {
		t.Fatalf("%d records in the log, want 5 (2 data, 3 markers)", len(got))
	}
	// An operator aborts a hanging transaction of a producer that never had
	// a marker with the coordinator epoch DescribeProducers showed: -1.
	produceWait(t, l, p, txnBatch(8, 0, 0, "hanging"))
	infos := p.Producers()
	if len(infos) != 2 || infos[0].CoordinatorEpoch != 2 || infos[1].CoordinatorEpoch != -1 || infos[1].CurrentTxnStartOffset != 5 {
		t.Fatalf("producers %+v", infos)
	}
	marker(t, l, p, 8, 0, false, -1)
	if _, hw := p.Offsets(); p.LastStableOffset() != hw {
		t.Fatalf("last stable offset %d after the operator's abort, high watermark %d", p.LastStableOffset(), hw)
	}
}

// txnScenario writes, on p, a committed transaction, an aborted one and
// one left open, between plain records, and returns what read_committed
// sees and the open transaction's first offset.
func txnScenario(t *testing.T, l *Log, p *Partition) (committedView, int64) {
	t.Helper()
	produceWait(t, l, p, plainBatch(9, 0, "p0"))
	produceWait(t, l, p, txnBatch(7, 0, 0, "c0"))
	produceWait(t, l, p, txnBatch(8, 0, 0, "a0"))
	marker(t, l, p, 7, 0, true, 0)
	produceWait(t, l, p, txnBatch(8, 0, 1, "a1"))
	marker(t, l, p, 8, 0, false, 0)
	produceWait(t, l, p, plainBatch(9, 1, "p1"))
	open := produceWait(t, l, p, txnBatch(7, 0, 1, "o0"))
	produceWait(t, l, p, plainBatch(9, 2, "p2"))
	v := readCommittedAll(t, l, p)
	if !reflect.DeepEqual(v.values, []string{"p0", "c0", "p1"}) || len(v.aborted) != 1 || v.end != open {
		t.Fatalf("scenario: %+v (open transaction at %d)", v, open)
	}
	return v, open
}

// TestTxnRecovery: a broker crash (SIGKILL: the WAL's unsynced bytes lost,
// nothing flushed) keeps the open-transaction table and the aborted index,
// rebuilt from metadata and the WAL (before any upload), from metadata
// alone (after one), in both durability modes.
func TestTxnRecovery(t *testing.T) {
	for _, d := range durabilityModes() {
		for _, uploaded := range []bool{false, true} {
			if d == DurabilityObject && !uploaded {
				continue // every acknowledged batch is uploaded
			}
			t.Run(fmt.Sprintf("%s/uploaded=%v", durabilityName(d), uploaded), func(t *testing.T) {
				edit := txnOpts(d)
				if !uploaded {
					edit = func(o *Options) { o.Durability = d } // uploads only when told
				}
				e := newLogEnv(t, edit)
				l := e.open()
				p := createTopic(t, l, "t", 1, nil).Partition(0)
				before, open := txnScenario(t, l, p)
				if uploaded {
					waitUploaded(t, p)
				}
				e.crash(l, false)

				l = e.open()
				tp, _ := l.Topic("t")
				p = tp.Partition(0)
				if got := readCommittedAll(t, l, p); !reflect.DeepEqual(got, before) {
					t.Fatalf("after recovery read committed %+v, before %+v", got, before)
				}
				if p.LastStableOffset() != open || !p.HasOpenTxn(7, 0) {
					t.Fatalf("last stable offset %d after recovery, want %d", p.LastStableOffset(), open)
				}
				// The producer ends its transaction after the restart.
				marker(t, l, p, 7, 0, true, 0)
				got := readCommittedAll(t, l, p)
				if !reflect.DeepEqual(got.values, []string{"p0", "c0", "p1", "o0", "p2"}) {
					t.Fatalf("after the commit: %+v", got)
				}
			})
		}
	}
}

// waitUploaded waits until everything appended to p is committed.
func waitUploaded(t *testing.T, p *Partition) {
	t.Helper()
	testwait.Until(t, 30*time.Second, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.committed == p.next
	}, "partition not uploaded")
}

// TestTxnOwnershipMove: the partition moves to another broker in the middle
// of a transaction; the new owner, from metadata alone, holds the last
// stable offset at the open transaction, knows the aborted one, and takes
// the producer's next batch and the marker. Then a producer-state fold,
// an object compaction and retention keep the index right.
func TestTxnOwnershipMove(t *testing.T) {
	for _, d := range durabilityModes() {
		t.Run(durabilityName(d), func(t *testing.T) {
			c := newCluster(t)
			eA, ownA := c.broker(1, txnOpts(d))
			eB, ownB := c.broker(2, func(o *Options) {
				txnOpts(d)(o)
				o.CompactMinAge = time.Nanosecond
				o.TailCacheBytes = 1 // reads from the objects, compacted or not
			})
			a := eA.open()
			p := createTopic(t, a, "t", 1, nil).Partition(0)
			acquire(t, a, ownA, p)
			before, open := txnScenario(t, a, p)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := a.Release(ctx, p.topic.ID, 0); err != nil {
				t.Fatalf("release: %v", err)
			}

			b := eB.open()
			tb, _ := b.TopicByID(p.topic.ID)
			q := tb.Partition(0)
			acquire(t, b, ownB, q)
			if got := readCommittedAll(t, b, q); !reflect.DeepEqual(got, before) {
				t.Fatalf("new owner reads %+v, old owner read %+v", got, before)
			}
			if q.LastStableOffset() != open || !q.HasOpenTxn(7, 0) {
				t.Fatalf("new owner's last stable offset %d, want %d", q.LastStableOffset(), open)
			}
			if got := q.Producers(); len(got) != 3 || got[0].CurrentTxnStartOffset != open {
				t.Fatalf("new owner's producers %+v", got)
			}
			produceWait(t, b, q, txnBatch(7, 0, 2, "o1"))
			abort := marker(t, b, q, 7, 0, false, 0)
			after := readCommittedAll(t, b, q)
			if !reflect.DeepEqual(after.values, []string{"p0", "c0", "p1", "p2"}) || len(after.aborted) != 2 ||
				after.aborted[1] != (AbortedTxn{ProducerID: 7, FirstOffset: open, LastOffset: abort}) {
				t.Fatalf("after the new owner's abort: %+v", after)
			}
			waitUploaded(t, q)

			// Fold the producer deltas, compact the objects: the same view.
			fence, _ := q.maintainedFence()
			if _, err := b.meta.FoldProducers(ctx, q.topic.ID, 0, 1, 0, fence...); err != nil {
				t.Fatalf("fold: %v", err)
			}
			if err := b.compact(ctx); err != nil {
				t.Fatalf("compact: %v", err)
			}
			if !hasCompacted(t, b, q) {
				t.Fatal("nothing compacted: the test no longer reads a compacted object")
			}
			if got := readCommittedAll(t, b, q); !reflect.DeepEqual(got, after) {
				t.Fatalf("after fold and compaction %+v, before %+v", got, after)
			}
			// Retention past the first aborted transaction drops it from the
			// index, in memory and, at the next fold, in metadata.
			first := after.aborted[0]
			if _, err := b.DeleteRecords(ctx, q, first.LastOffset+1); err != nil {
				t.Fatal(err)
			}
			trimmed := readCommittedAll(t, b, q)
			if len(trimmed.aborted) != 1 || trimmed.aborted[0] != after.aborted[1] {
				t.Fatalf("aborted after retention %+v", trimmed.aborted)
			}
			produceWait(t, b, q, plainBatch(9, 3, "p3"))
			waitUploaded(t, q)
			if _, err := b.meta.FoldProducers(ctx, q.topic.ID, 0, 1, 0, fence...); err != nil {
				t.Fatalf("fold: %v", err)
			}
			list, err := b.meta.ProducerStates(ctx, q.topic.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range list {
				for _, r := range st.Aborted {
					if r.Last < first.LastOffset+1 {
						t.Fatalf("producer %d keeps aborted transaction %+v below the log start", st.ID, r)
					}
				}
			}
		})
	}
}

// TestTxnInterleavedModel: three transactional producers and a plain one
// interleave at random, transactions commit and abort; after every step
// the last stable offset is the oldest open transaction's first offset
// and read_committed sees exactly the model's committed records below it,
// record by record. A crash and restart at the end changes nothing.
func TestTxnInterleavedModel(t *testing.T) {
	e := newLogEnv(t, txnOpts(DurabilityWAL))
	l := e.open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	rng := rand.New(rand.NewSource(19))
	type entry struct {
		value string
		pid   int64
		txn   int // index into outcome, -1 for plain records
	}
	var log []entry   // by offset; markers hold an empty value
	var outcome []int // per transaction: 0 open, 1 committed, 2 aborted
	type txnProducer struct {
		seq   int32
		txn   int // current transaction, -1 none
		first int64
	}
	prods := map[int64]*txnProducer{1: {txn: -1}, 2: {txn: -1}, 3: {txn: -1}}
	var plainSeq int32
	check := func(step int) {
		t.Helper()
		lso := int64(len(log))
		for _, tp := range prods {
			if tp.txn >= 0 {
				lso = min(lso, tp.first)
			}
		}
		if got := p.LastStableOffset(); got != lso {
			t.Fatalf("step %d: last stable offset %d, model %d", step, got, lso)
		}
		var want []string
		for _, en := range log[:lso] {
			if en.value != "" && (en.txn < 0 || outcome[en.txn] == 1) {
				want = append(want, en.value)
			}
		}
		v := readCommittedAll(t, l, p)
		if !reflect.DeepEqual(v.values, want) && !(len(v.values) == 0 && len(want) == 0) {
			t.Fatalf("step %d: read committed %v, model %v", step, v.values, want)
		}
	}
	for step := range 150 {
		pid := int64(1 + rng.Intn(3))
		tp := prods[pid]
		switch r := rng.Intn(10); {
		case r < 3:
			v := fmt.Sprintf("plain%d", step)
			produceWait(t, l, p, plainBatch(10, plainSeq, v))
			plainSeq++
			log = append(log, entry{value: v, pid: 10, txn: -1})
		case r < 7:
			if tp.txn < 0 {
				tp.txn, tp.first = len(outcome), int64(len(log))
				outcome = append(outcome, 0)
			}
			v := fmt.Sprintf("txn%d", step)
			produceWait(t, l, p, txnBatch(pid, 0, tp.seq, v))
			tp.seq++
			log = append(log, entry{value: v, pid: pid, txn: tp.txn})
		default:
			commit := rng.Intn(2) == 0
			marker(t, l, p, pid, 0, commit, 0)
			if tp.txn >= 0 {
				outcome[tp.txn] = 2
				if commit {
					outcome[tp.txn] = 1
				}
				tp.txn = -1
			}
			log = append(log, entry{pid: pid, txn: -1})
		}
		check(step)
	}
	before := readCommittedAll(t, l, p)
	e.crash(l, false)
	l = e.open()
	tp, _ := l.Topic("t")
	p = tp.Partition(0)
	if got := readCommittedAll(t, l, p); !reflect.DeepEqual(got, before) {
		t.Fatalf("after restart %+v, before %+v", got, before)
	}
	check(-1)
}

// TestTxnWakesOnLSO: a long poll registered with Notify wakes when a
// marker moves the last stable offset, and the gauges count the open
// transactions and the greatest lag.
func TestTxnWakesOnLSO(t *testing.T) {
	l := newLogEnv(t, txnOpts(DurabilityWAL)).open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	first := produceWait(t, l, p, txnBatch(7, 0, 0, "x"))
	produceWait(t, l, p, plainBatch(9, 0, "y"))
	reg := prometheus.NewRegistry()
	l.RegisterGauges(reg)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		got[f.GetName()] = f.GetMetric()[0].GetGauge().GetValue()
	}
	if got["sediment_open_transactions"] != 1 || got["sediment_lso_lag_max_offsets"] != 2 {
		t.Fatalf("gauges %v: want 1 open transaction and a lag of 2", got)
	}
	ch := make(chan struct{}, 1)
	p.Notify(ch)
	defer p.StopNotify(ch)
	if p.LastStableOffset() != first {
		t.Fatal("last stable offset moved before the marker")
	}
	marker(t, l, p, 7, 0, true, 0)
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatal("no wake-up when the last stable offset moved")
	}
	if _, hw := p.Offsets(); p.LastStableOffset() != hw {
		t.Fatalf("last stable offset %d, high watermark %d", p.LastStableOffset(), hw)
	}
	if open, lag := l.txnGauges(); open != 0 || lag != 0 {
		t.Fatalf("gauges after the commit: %d open, lag %d", open, lag)
	}
}

// TestTxnMarkerLostInCrash: a crash takes the marker before it is durable
// (or not: the WAL may have synced it); after the restart the transaction
// is either still open or ended, never half, and the coordinator's
// repeated marker ends it once.
func TestTxnMarkerLostInCrash(t *testing.T) {
	e := newLogEnv(t, func(o *Options) { o.Durability = DurabilityWAL })
	l := e.open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	first := produceWait(t, l, p, txnBatch(7, 0, 0, "a"))
	produceWait(t, l, p, txnBatch(7, 0, 1, "b"))
	raw := record.MarkerBatch(7, 0, record.ControlMarker{Commit: true}, 1)
	if _, err := l.appendMarker(p, raw, Marker{ProducerID: 7, Commit: true}, 1); err != nil {
		t.Fatal(err)
	}
	e.crash(l, false)

	l = e.open()
	tp, _ := l.Topic("t")
	p = tp.Partition(0)
	_, hw := p.Offsets()
	switch lso := p.LastStableOffset(); {
	case hw == 2 && lso == first && p.HasOpenTxn(7, 0): // the marker was lost
	case hw == 3 && lso == 3 && !p.HasOpenTxn(7, 0): // it was synced
	default:
		t.Fatalf("after the crash: high watermark %d, last stable offset %d", hw, lso)
	}
	marker(t, l, p, 7, 0, true, 0)
	v := readCommittedAll(t, l, p)
	if !reflect.DeepEqual(v.values, []string{"a", "b"}) || len(v.aborted) != 0 {
		t.Fatalf("read committed after the repeated marker: %+v", v)
	}
}

// TestTxnTakeover: the owner crashes in the middle of a transaction and
// another broker takes the partition over without a handover: it rebuilds
// the open-transaction table and the aborted index from metadata alone and
// ends the transaction.
func TestTxnTakeover(t *testing.T) {
	for _, d := range durabilityModes() {
		t.Run(durabilityName(d), func(t *testing.T) { runTxnTakeover(t, newCluster(t), d) })
	}
	// The same on a real embedded etcd, each broker with its own client.
	t.Run("etcd", func(t *testing.T) { runTxnTakeover(t, newEtcdCluster(t), DurabilityWAL) })
}

func runTxnTakeover(t *testing.T, c *cluster, d Durability) {
	eA, ownA := c.broker(1, txnOpts(d))
	eB, ownB := c.broker(2, txnOpts(d))
	a := eA.open()
	p := createTopic(t, a, "t", 1, nil).Partition(0)
	acquire(t, a, ownA, p)
	before, open := txnScenario(t, a, p)
	waitUploaded(t, p)
	eA.crash(a, false)

	b := eB.open()
	tb, _ := b.Topic("t")
	q := tb.Partition(0)
	acquire(t, b, ownB, q)
	if got := readCommittedAll(t, b, q); !reflect.DeepEqual(got, before) {
		t.Fatalf("after the takeover %+v, before %+v", got, before)
	}
	if q.LastStableOffset() != open || !q.HasOpenTxn(7, 0) {
		t.Fatalf("last stable offset %d after the takeover, want %d", q.LastStableOffset(), open)
	}
	marker(t, b, q, 7, 0, true, 0)
	if got := readCommittedAll(t, b, q); !reflect.DeepEqual(got.values, []string{"p0", "c0", "p1", "o0", "p2"}) {
		t.Fatalf("after the commit: %+v", got)
	}
}
