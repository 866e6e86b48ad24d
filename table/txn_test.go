package table

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"sync"
	"testing"
	"time"

	icebergcatalog "github.com/apache/iceberg-go/catalog"

	"github.com/sediment-io/sediment/storage/partition"
	"github.com/sediment-io/sediment/storage/record"
	"github.com/sediment-io/sediment/table/catalog"
)

// Offsets of the v2 batch header fields a test sets by hand (the Kafka
// wire layout, frozen by the protocol).
const (
	attributesAt    = 21
	producerIDAt    = 43
	producerEpochAt = 51
	baseSequenceAt  = 53
	crcAt           = 17
)

// producedBatch is a batch as a producer sends it: transactional for
// producer pid (epoch 0, first sequence seq) when pid >= 0, with a valid
// CRC.
func producedBatch(pid int64, seq int32, values ...string) []byte {
	raw := storedBatch(0, pid, values...)
	if pid >= 0 {
		binary.BigEndian.PutUint16(raw[producerEpochAt:], 0)
		binary.BigEndian.PutUint32(raw[baseSequenceAt:], uint32(seq))
	}
	binary.BigEndian.PutUint32(raw[crcAt:], crc32.Checksum(raw[attributesAt:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

// storedBatch is a batch as the log stores it: at base, with values v,
// transactional for producer pid when pid >= 0.
func storedBatch(base int64, pid int64, values ...string) []byte {
	recs := make([]record.Record, len(values))
	for i, v := range values {
		recs[i] = record.Record{Offset: int64(i), Timestamp: time.Now().UnixMilli(), Value: []byte(v)}
	}
	raw := record.EncodeBatch(recs)
	if pid >= 0 {
		attrs := binary.BigEndian.Uint16(raw[attributesAt:])
		binary.BigEndian.PutUint16(raw[attributesAt:], attrs|0x10)
		binary.BigEndian.PutUint64(raw[producerIDAt:], uint64(pid))
	}
	record.SetBaseOffset(raw, base, 0)
	return raw
}

// markerAt is pid's commit or abort marker at offset at.
func markerAt(at int64, pid int64, commit bool) []byte {
	raw := record.MarkerBatch(pid, 0, record.ControlMarker{Commit: commit}, time.Now().UnixMilli())
	record.SetBaseOffset(raw, at, 0)
	return raw
}

func TestCommittedBatch(t *testing.T) {
	aborted := []partition.AbortedTxn{{ProducerID: 7, FirstOffset: 2, LastOffset: 6}, {ProducerID: 9, FirstOffset: 4, LastOffset: 20}}
	for _, tc := range []struct {
		name string
		raw  []byte
		want bool
	}{
		{"plain", storedBatch(3, -1, "a"), true},
		{"aborted", storedBatch(2, 7, "x"), false},
		{"aborted, later batch", storedBatch(5, 7, "x"), false},
		{"same producer after its abort marker", storedBatch(8, 7, "c"), true},
		{"same producer before its transaction", storedBatch(1, 7, "c"), true},
		{"another producer inside the range", storedBatch(3, 8, "c"), true},
		{"second aborted transaction", storedBatch(10, 9, "x"), false},
		{"commit marker", markerAt(7, 8, true), false},
		{"abort marker", markerAt(6, 7, false), false},
	} {
		if got := committedBatch(tc.raw, aborted); got != tc.want {
			t.Errorf("%s: committed %v, want %v", tc.name, got, tc.want)
		}
	}
	if !committedBatch(storedBatch(2, 7, "x"), nil) {
		t.Error("a transactional batch with no aborted transaction in its read was dropped")
	}
}

// txnLog is a partition log as ReadCommitted answers it: stored batches,
// the high watermark, the last stable offset and the aborted transactions.
type txnLog struct {
	mu      sync.Mutex // guards the fields below
	batches [][]byte
	hw, lso int64
	aborted []partition.AbortedTxn
	reads   int
}

// read is Options.Read over l for every partition: the batches from the
// one holding offset up to the last stable offset, and the aborted
// transactions overlapping them.
func (l *txnLog) read(_ context.Context, _ *partition.Partition, offset int64, _ int, _ bool) (partition.FetchResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reads++
	res := partition.FetchResult{HighWatermark: l.hw, LastStableOffset: l.lso}
	last := int64(-1)
	for _, raw := range l.batches {
		if record.LastOffset(raw) >= offset && record.BaseOffset(raw) < l.lso {
			res.Batches = append(res.Batches, raw)
			last = record.LastOffset(raw)
		}
	}
	for _, a := range l.aborted {
		if a.FirstOffset <= last && a.LastOffset >= offset {
			res.Aborted = append(res.Aborted, a)
		}
	}
	return res, nil
}

func (l *txnLog) set(hw, lso int64, aborted []partition.AbortedTxn, batches ...[]byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.batches = append(l.batches, batches...)
	l.hw, l.lso, l.aborted = hw, lso, aborted
}

// TestConvertsCommittedOnly: the converter stops at the last stable
// offset, leaves out aborted transactions and markers, and converts an
// open transaction's records once it commits.
func TestConvertsCommittedOnly(t *testing.T) {
	e := newTableEnv(t)
	aborted := []partition.AbortedTxn{{ProducerID: 7, FirstOffset: 2, LastOffset: 6}}
	fake := &txnLog{}
	fake.set(14, 10, aborted,
		storedBatch(0, -1, "a0", "a1"),
		storedBatch(2, 7, "x2", "x3"), // aborted at 6
		storedBatch(4, 8, "c4", "c5"), // committed at 7
		markerAt(6, 7, false),
		markerAt(7, 8, true),
		storedBatch(8, -1, "a8", "a9"),
		storedBatch(10, 9, "o10", "o11"), // open: the last stable offset is 10
		storedBatch(12, -1, "a12", "a13"),
	)
	slot := &fakeSlot{}
	slot.set(1, true)
	cat, err := catalog.Open(context.Background(), "", catalog.Options{DataDir: e.dir})
	if err != nil {
		t.Fatal(err)
	}
	c := Start(Options{Log: e.log, Catalog: cat, Logger: testLogger(), PollInterval: 20 * time.Millisecond,
		RetryInterval: 20 * time.Millisecond, OrphanGrace: -1, Cluster: slot, Read: fake.read})
	t.Cleanup(func() {
		c.Close()
		closeCatalog(cat)
	})
	if err := c.AcquireTable(context.Background(), e.topic.ID); err != nil {
		t.Fatal(err)
	}
	e.waitOffsets(cat, 10, "the records below the last stable offset are converted")
	want := map[int64]bool{0: true, 1: true, 4: true, 5: true, 8: true, 9: true}
	checkOffsetsIn(t, e, cat, want)
	// The converter keeps polling the open transaction's partition and
	// converts nothing past it meanwhile.
	fake.mu.Lock()
	seen := fake.reads
	fake.mu.Unlock()
	waitFor(t, "the converter reads again while the transaction is open", func() bool {
		fake.mu.Lock()
		defer fake.mu.Unlock()
		return fake.reads > seen+4
	})
	if got := e.offsets(cat); got[0] != 10 || got[1] != 10 {
		t.Fatalf("offsets %v past the last stable offset 10", got)
	}
	fake.set(17, 17, aborted, markerAt(14, 9, true), storedBatch(15, -1, "a15", "a16"))
	e.waitOffsets(cat, 17, "the committed transaction and what followed it are converted")
	for _, o := range []int64{10, 11, 12, 13, 15, 16} {
		want[o] = true
	}
	checkOffsetsIn(t, e, cat, want)
}

// checkOffsetsIn fails unless each partition's table rows are exactly the
// offsets of want, once each.
func checkOffsetsIn(t *testing.T, e *tableEnv, cat icebergcatalog.Catalog, want map[int64]bool) {
	t.Helper()
	seen := e.rows(cat)
	for k, n := range seen {
		if !want[k[1]] || n != 1 {
			t.Errorf("partition %d offset %d: %d rows, want %d", k[0], k[1], n, map[bool]int{true: 1}[want[k[1]]])
		}
	}
	for _, p := range []int64{0, 1} {
		for o := range want {
			if seen[[2]int64{p, o}] == 0 {
				t.Errorf("partition %d offset %d: no row", p, o)
			}
		}
	}
}

// TestConvertsCommittedOnlyFromLog: the same through the partition log's
// own ReadCommitted, with markers written as the coordinator writes them.
func TestConvertsCommittedOnlyFromLog(t *testing.T) {
	e := newTableEnv(t)
	ctx := context.Background()
	appendTo := func(p *partition.Partition, raw []byte) {
		t.Helper()
		res, err := e.log.Append(ctx, p, raw)
		if err == nil {
			err = e.log.Wait(ctx, res)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	markTo := func(p *partition.Partition, pid int64, commit bool) {
		t.Helper()
		if _, err := e.log.WriteMarker(ctx, p, partition.Marker{ProducerID: pid, Commit: commit}); err != nil {
			t.Fatal(err)
		}
	}
	parts := e.topic.Partitions()
	for _, p := range parts {
		appendTo(p, producedBatch(-1, 0, "a0", "a1"))
		appendTo(p, producedBatch(7, 0, "x2", "x3"))
		appendTo(p, producedBatch(8, 0, "c4", "c5"))
		markTo(p, 7, false) // 6
		markTo(p, 8, true)  // 7
		appendTo(p, producedBatch(-1, 0, "a8", "a9"))
		appendTo(p, producedBatch(9, 0, "o10", "o11"))
		appendTo(p, producedBatch(-1, 0, "a12", "a13"))
		if lso := p.LastStableOffset(); lso != 10 {
			t.Fatalf("partition %d: last stable offset %d, want 10", p.Index(), lso)
		}
	}
	_, cat := e.converter(nil, nil)
	e.waitOffsets(cat, 10, "the records below the last stable offset are converted")
	want := map[int64]bool{0: true, 1: true, 4: true, 5: true, 8: true, 9: true}
	checkOffsetsIn(t, e, cat, want)
	for _, p := range parts {
		markTo(p, 9, true) // 14
		appendTo(p, producedBatch(-1, 0, "a15", "a16"))
	}
	e.waitOffsets(cat, 17, "the committed transaction and what followed it are converted")
	for _, o := range []int64{10, 11, 12, 13, 15, 16} {
		want[o] = true
	}
	checkOffsetsIn(t, e, cat, want)
}
