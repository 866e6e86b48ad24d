package lifecycle

import (
	"fmt"
	"testing"

	"github.com/sediment-io/sediment/metadata"
)

// foldPage builds a page of index entries of one offset each from a
// pattern: 'u' an upload entry, 'm' a manifest entry, 'c' a compacted chunk.
func foldPage(pattern string) []metadata.Segment {
	segs := make([]metadata.Segment, len(pattern))
	for i, c := range pattern {
		s := metadata.Segment{BaseOffset: int64(i), EndOffset: int64(i + 1), Object: fmt.Sprintf("data/%d", i)}
		switch c {
		case 'm':
			s.Object, s.Manifest = fmt.Sprintf("manifest/%d", i), true
		case 'c':
			s.Object = CompactedPrefix + "x"
		}
		segs[i] = s
	}
	return segs
}

func TestPlanFold(t *testing.T) {
	for _, tc := range []struct {
		name     string
		page     string
		logStart int64
		full     bool
		keys     int
		maxRun   int
		run      [2]int64 // [from, to) of the run; {0, 0}: none
		settled  int64
	}{
		{"under the bound", "uuuuuuuu", 0, false, 8, 100, [2]int64{}, 0},
		{"over the bound keeps the newest", "uuuuuuuuuu", 0, false, 8, 100, [2]int64{0, 6}, 0},
		{"a run is at most maxRun", "uuuuuuuuuu", 0, false, 8, 3, [2]int64{0, 3}, 0},
		{"manifests are passed", "mmuuuuuuuuuu", 0, false, 8, 100, [2]int64{2, 8}, 2},
		{"compacted chunks are passed", "ccuuuuuuuuuu", 0, false, 8, 100, [2]int64{2, 8}, 2},
		{"a lone entry between others is passed", "mumuuuuuuuuuu", 0, false, 8, 100, [2]int64{3, 9}, 3},
		{"a closed run goes whole", "uuumuuuuuuuu", 0, false, 8, 100, [2]int64{0, 3}, 0},
		{"below the log start is retention's", "uuuuuuuuuuuu", 3, false, 8, 100, [2]int64{3, 8}, 3},
		{"a full page folds even under the bound", "uucccccccc", 0, true, 8, 100, [2]int64{0, 2}, 0},
		{"nothing foldable moves the cursor to the end", "mmcc", 0, false, 1, 100, [2]int64{}, 4},
		{"an empty page", "", 0, false, 8, 100, [2]int64{}, 0},
	} {
		plan := planFold(foldPage(tc.page), tc.logStart, tc.full, tc.keys, tc.maxRun)
		var got [2]int64
		if plan.run != nil {
			got = [2]int64{plan.run[0].BaseOffset, plan.run[len(plan.run)-1].EndOffset}
		}
		if got != tc.run || plan.settled != tc.settled {
			t.Errorf("%s: run %v settled %d, want run %v settled %d", tc.name, got, plan.settled, tc.run, tc.settled)
		}
	}
}

// A compaction run whose manifest entries fold many entries is cut to fit
// one transaction; a lone upload unit is not worth a rewrite.
func TestTrimRun(t *testing.T) {
	u := func(entries int) unit {
		s := metadata.Segment{Object: "data/x"}
		if entries > 0 {
			s = metadata.Segment{Object: "manifest/x", Manifest: true, Entries: entries}
		}
		return unit{segs: []metadata.Segment{s}}
	}
	for _, tc := range []struct {
		name string
		run  []unit
		page int
		want int
	}{
		{"plain units fit", []unit{u(0), u(0), u(0)}, 32, 3},
		{"manifests cut the run", []unit{u(20), u(20), u(0)}, 32, 1},
		{"one manifest alone is still worth it", []unit{u(40), u(0)}, 32, 1},
		{"a lone upload unit is not", []unit{u(0)}, 32, 0},
		{"the manifest after a lone upload unit is", []unit{u(0), u(40)}, 32, 1},
	} {
		if got := len(trimRun(tc.run, tc.page)); got != tc.want {
			t.Errorf("%s: %d units, want %d", tc.name, got, tc.want)
		}
	}
}
