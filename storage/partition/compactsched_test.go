package partition

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sediment-io/sediment/storage/dataobject"
)

// produceRound appends one batch of about size bytes to every partition,
// uploads, and does so n times: each partition gains n small segments,
// each in an object shared with the other partitions.
func produceRound(t *testing.T, l *Log, parts []*Partition, n, size int) {
	t.Helper()
	for range n {
		for _, p := range parts {
			produce(t, l, p, testBatch{values: [][]byte{make([]byte, size)}, firstTS: time.Now().UnixMilli()})
		}
		uploadAll(t, l)
	}
}

// hasCompacted reports whether p's index holds a compacted object.
func hasCompacted(t *testing.T, l *Log, p *Partition) bool {
	t.Helper()
	segs, err := l.meta.Segments(context.Background(), p.topic.ID, p.index, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range segs {
		if i > 0 && s.BaseOffset != segs[i-1].EndOffset {
			t.Fatalf("%d: gap in the index: %+v then %+v", p.index, segs[i-1], s)
		}
		if strings.HasPrefix(s.Object, compactPrefix) {
			return true
		}
	}
	return false
}

// TestCompactionReachesEveryPartition: every partition gains more work
// than one pass's budget before every pass, so a compactor that visits
// partitions in the same order each pass never gets past the first ones.
// Every partition must get compacted within K passes, K derived from the
// budget: a pass writes at least its budget B (a run is never cut short),
// a partition with work gets a run every round, and a run writes at most
// W bytes, so N partitions are all reached within ceil(N·W/B) passes.
func TestCompactionReachesEveryPartition(t *testing.T) {
	const (
		n      = 10
		target = 4096
		batch  = 1650 // two batches make a run; three overflow the target
	)
	_, l := lifecycleEnv(t, func(o *Options) {
		o.CompactTargetBytes = target
		o.CompactChunkBytes = target
		o.CompactMinAge = time.Nanosecond
		o.CompactBytesPerSec = 4 // × the 1 h interval: a pass budget of 14,400 bytes
	})
	parts := createTopic(t, l, "many", n, nil).Partitions()
	budget := l.compaction.Budget()
	maxRun := int64(target + dataobject.TrailerLen + 2*dataobject.EntryLen) // data up to the target, one or two index entries
	k := int((n*maxRun + budget - 1) / budget)
	if k < 2 || k >= n {
		t.Fatalf("K = %d passes: the setup no longer tells rotation from a fixed order", k)
	}
	compacted := map[int32]int{}
	for pass := 1; pass <= k; pass++ {
		produceRound(t, l, parts, 10, batch) // 5 runs a partition: more than a pass's budget
		if err := l.compact(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, p := range parts {
			if _, done := compacted[p.index]; !done && hasCompacted(t, l, p) {
				compacted[p.index] = pass
			}
		}
	}
	for _, p := range parts {
		if _, ok := compacted[p.index]; !ok {
			t.Errorf("partition %d not compacted within %d passes of %d bytes (compacted: %v)", p.index, k, budget, compacted)
		}
	}
}

// TestCompactionPagesTheIndex: with an index page far smaller than the
// index, visits resume from the partition's cursor and every run is
// compacted; the log reads back whole.
func TestCompactionPagesTheIndex(t *testing.T) {
	_, l := lifecycleEnv(t, func(o *Options) {
		o.tune.compactPage = 4
		o.CompactTargetBytes = 4096
		o.CompactChunkBytes = 1024
		o.CompactMinAge = time.Nanosecond
		o.TailCacheBytes = 1
	})
	p := createTopic(t, l, "paged", 1, nil).Partition(0)
	var want [][]byte
	for i := range 30 {
		v := []byte(strings.Repeat(string(rune('a'+i%26)), 1650))
		produce(t, l, p, testBatch{values: [][]byte{v}, firstTS: time.Now().UnixMilli()})
		uploadAll(t, l)
		want = append(want, v)
	}
	for range 3 {
		if err := l.compact(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	segs, err := l.meta.Segments(context.Background(), p.topic.ID, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range segs {
		if !strings.HasPrefix(s.Object, compactPrefix) {
			t.Errorf("segment [%d,%d) still in upload object %s", s.BaseOffset, s.EndOffset, s.Object)
		}
	}
	checkContiguous(t, l, p, want)
}
