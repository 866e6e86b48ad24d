package partition

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/sediment-io/sediment/metadata"
)

// Compaction scheduling. Each pass gets a byte budget, CompactBytesPerSec
// times MaintainInterval, and spends it in rounds over the partitions: a
// visit reads one page of the partition's index from the partition's own
// cursor and rewrites at most one run, so every partition with work gets a
// run per round however much work the others have. The next pass starts at
// the partition after the last one visited. A partition with work therefore
// waits at most about N·W/B passes (N partitions, W the largest object a
// run writes, B the pass budget) instead of forever behind busier ones.
//
// The budget is a token bucket: a pass that overshoots (a run is never cut
// short) starts the next one in debt, and an idle pass banks nothing, so
// over time compaction writes at most CompactBytesPerSec.

// compactPage is how many index entries one visit reads; a variable for
// tests.
var compactPage = 256

// partRef names a partition across passes (its *Partition may be replaced
// when its topic is recreated).
type partRef struct {
	topic string
	index int32
}

func (r partRef) less(o partRef) bool {
	return r.topic < o.topic || r.topic == o.topic && r.index < o.index
}

// compactState is the compactor's memory between passes.
type compactState struct {
	// mu guards every field below. It is held for a whole pass, so passes
	// never interleave, and taken before every other lock of this package.
	mu sync.Mutex
	// last is the partition the previous pass visited last; the next pass
	// starts after it.
	last partRef
	// from holds, per partition (by topic ID), the offset its next visit
	// reads the index from: everything below is settled.
	from map[metadata.PartitionKey]int64
	// credit is the pass budget left over: negative after an overshoot.
	credit int64
}

// compactBudget is one pass's share of CompactBytesPerSec.
func (l *Log) compactBudget() int64 {
	return int64(min(float64(l.opts.CompactBytesPerSec)*l.opts.MaintainInterval.Seconds(), math.MaxInt64/2))
}

// compact runs one pass of compaction (see above).
func (l *Log) compact(ctx context.Context) error {
	st := &l.compaction
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.from == nil {
		st.from = map[metadata.PartitionKey]int64{}
	}
	parts := l.partitionsAfter(st.last)
	st.credit = min(st.credit, 0) + l.compactBudget()
	var errs []error
	for i, idle := 0, 0; st.credit > 0 && idle < len(parts) && ctx.Err() == nil; i++ {
		p := parts[i%len(parts)]
		n, did, err := l.compactNext(ctx, p)
		st.credit -= n
		st.last = partRef{p.topic.Name, p.index}
		if err != nil && !metadata.IsConflict(err) {
			errs = append(errs, fmt.Errorf("%s/%d: %w", p.topic.Name, p.index, err))
		}
		if idle++; did && err == nil {
			idle = 0 // credit fell or a cursor moved on: the loop still ends
		}
	}
	l.forgetGoneCursors(parts)
	return errors.Join(errs...)
}

// partitionsAfter returns every partition in (topic, index) order, rotated
// to start after last.
func (l *Log) partitionsAfter(last partRef) []*Partition {
	var parts []*Partition
	for _, t := range l.Topics() { // sorted by name
		parts = append(parts, t.Partitions()...)
	}
	at := sort.Search(len(parts), func(i int) bool {
		return last.less(partRef{parts[i].topic.Name, parts[i].index})
	})
	return append(parts[at:len(parts):len(parts)], parts[:at]...)
}

// forgetGoneCursors drops the cursors of partitions that no longer exist.
func (l *Log) forgetGoneCursors(parts []*Partition) {
	live := make(map[metadata.PartitionKey]bool, len(parts))
	for _, p := range parts {
		live[metadata.PartitionKey{Topic: p.topic.ID, Partition: p.index}] = true
	}
	for k := range l.compaction.from {
		if !live[k] {
			delete(l.compaction.from, k)
		}
	}
}

// compactNext rewrites p's next run, if it has one: it reads a page of the
// index from p's cursor, compacts the first run worth it and moves the
// cursor to the first segment that is not settled. It returns the bytes
// written and whether it made progress: compacted a run or moved the
// cursor (which only moves forward, so a pass still ends).
func (l *Log) compactNext(ctx context.Context, p *Partition) (int64, bool, error) {
	key := metadata.PartitionKey{Topic: p.topic.ID, Partition: p.index}
	from := l.compaction.from[key]
	segs, err := l.meta.Segments(ctx, p.topic.ID, p.index, from, compactPage)
	if err != nil {
		return 0, false, err
	}
	logStart, _ := p.Offsets()
	plan := l.planRuns(groupUnits(segs, logStart), len(segs) < compactPage, time.Now())
	moved := plan.settled > from
	if moved {
		l.compaction.from[key] = plan.settled
	}
	if plan.run == nil {
		return 0, moved, nil
	}
	n, err := l.compactRun(ctx, p, plan.run)
	return n, true, err
}

// runPlan is what one visit found in a page of the index: the first run
// worth rewriting (nil: none) and the offset below which no unit will ever
// be part of a run (the visit's new cursor).
type runPlan struct {
	run     []unit
	settled int64
}

// planRuns finds the first run worth rewriting among units, read from one
// page of the index (end: the page reaches the end of the index), and how
// far the cursor may move: past every unit that can never be part of a run
// (a big one, or a lone small one between others), up to the first run,
// worth it or not yet (it may age, or grow while it is the last).
func (l *Log) planRuns(units []unit, end bool, now time.Time) runPlan {
	switch {
	case !end && len(units) == 1:
		return runPlan{settled: units[0].end()} // one object fills the page: no small unit
	case !end && len(units) > 1:
		units = units[:len(units)-1] // it may go on in the next page
	}
	var plan runPlan
	pending := false
	groups := l.groupRuns(units)
	for i, g := range groups {
		if len(g) == 1 && (2*g[0].size >= l.opts.CompactTargetBytes || i < len(groups)-1) {
			if !pending {
				plan.settled = g[0].end()
			}
			continue
		}
		pending = true
		if plan.run == nil && l.worthRewriting(g, now) {
			plan.run = g
		}
	}
	return plan
}

// groupRuns cuts units into candidate runs: each big unit (at least half
// the target) alone, and consecutive small ones together up to the target.
func (l *Log) groupRuns(units []unit) [][]unit {
	target := l.opts.CompactTargetBytes
	var groups [][]unit
	var run []unit
	var size int64
	flush := func() {
		if len(run) > 0 {
			groups = append(groups, run)
		}
		run, size = nil, 0
	}
	for _, u := range units {
		if 2*u.size >= target {
			flush()
			groups = append(groups, []unit{u})
			continue
		}
		if size+u.size > target {
			flush()
		}
		run, size = append(run, u), size+u.size
	}
	flush()
	return groups
}

// worthRewriting: at least two units that together reach half the target,
// or whose newest object is older than CompactMinAge.
func (l *Log) worthRewriting(run []unit, now time.Time) bool {
	if len(run) < 2 {
		return false
	}
	var size int64
	for _, u := range run {
		size += u.size
	}
	return 2*size >= l.opts.CompactTargetBytes || now.Sub(objectTime(run[len(run)-1].object())) >= l.opts.CompactMinAge
}
