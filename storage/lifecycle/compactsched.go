package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/sediment-io/sediment/metadata"
)

// Compaction scheduling. Each pass gets a byte budget, BytesPerSec times
// Interval, and spends it in rounds over the partitions: a
// visit reads one page of the partition's index from the partition's own
// cursor and rewrites at most one run, so every partition with work gets a
// run per round however much work the others have. The next pass starts at
// the partition after the last one visited. A partition with work therefore
// waits at most about N·W/B passes (N partitions, W the largest object a
// run writes, B the pass budget) instead of forever behind busier ones.
//
// The budget is a token bucket: a pass that overshoots (a run is never cut
// short) starts the next one in debt, and an idle pass banks nothing, so
// over time compaction writes at most BytesPerSec.

// DefaultCompactPage is the default of Compactor.Page.
const DefaultCompactPage = 256

// partRef names a partition across passes (its *Partition may be replaced
// when its topic is recreated).
type partRef struct {
	topic string
	index int32
}

func (r partRef) less(o partRef) bool {
	return r.topic < o.topic || r.topic == o.topic && r.index < o.index
}

// Budget is one pass's share of BytesPerSec.
func (c *Compactor) Budget() int64 {
	return int64(min(float64(c.BytesPerSec)*c.Interval.Seconds(), math.MaxInt64/2))
}

// Pass runs one pass of compaction (see above) over parts, every partition
// in (topic, index) order.
func (c *Compactor) Pass(ctx context.Context, parts []Partition) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.from == nil {
		c.from = map[metadata.PartitionKey]int64{}
	}
	parts = rotateAfter(parts, c.last)
	c.credit = min(c.credit, 0) + c.Budget()
	var errs []error
	for i, idle := 0, 0; c.credit > 0 && idle < len(parts) && ctx.Err() == nil; i++ {
		p := parts[i%len(parts)]
		n, did, err := c.compactNext(ctx, p)
		c.credit -= n
		c.last = partRef{p.Topic, p.Index}
		if err != nil && !metadata.IsConflict(err) {
			errs = append(errs, fmt.Errorf("%s/%d: %w", p.Topic, p.Index, err))
		}
		if idle++; did && err == nil {
			idle = 0 // credit fell or a cursor moved on: the loop still ends
		}
	}
	c.forgetGoneCursors(parts)
	return errors.Join(errs...)
}

// rotateAfter returns parts, in (topic, index) order, rotated to start
// after last.
func rotateAfter(parts []Partition, last partRef) []Partition {
	at := sort.Search(len(parts), func(i int) bool {
		return last.less(partRef{parts[i].Topic, parts[i].Index})
	})
	return append(parts[at:len(parts):len(parts)], parts[:at]...)
}

// forgetGoneCursors drops the cursors of partitions that no longer exist.
func (c *Compactor) forgetGoneCursors(parts []Partition) {
	live := make(map[metadata.PartitionKey]bool, len(parts))
	for _, p := range parts {
		live[metadata.PartitionKey{Topic: p.TopicID, Partition: p.Index}] = true
	}
	for k := range c.from {
		if !live[k] {
			delete(c.from, k)
		}
	}
}

// compactNext rewrites p's next run, if it has one: it reads a page of the
// index from p's cursor, compacts the first run worth it and moves the
// cursor to the first segment that is not settled. It returns the bytes
// written and whether it made progress: compacted a run or moved the
// cursor (which only moves forward, so a pass still ends).
func (c *Compactor) compactNext(ctx context.Context, p Partition) (int64, bool, error) {
	key := metadata.PartitionKey{Topic: p.TopicID, Partition: p.Index}
	from := c.from[key]
	page := c.Page
	if page <= 0 {
		page = DefaultCompactPage
	}
	segs, err := c.Meta.Segments(ctx, p.TopicID, p.Index, from, page)
	if err != nil {
		return 0, false, err
	}
	plan := c.planRuns(groupUnits(segs, p.LogStart()), len(segs) < page, time.Now())
	moved := plan.settled > from
	if moved {
		c.from[key] = plan.settled
	}
	run := trimRun(plan.run, page)
	if run == nil {
		return 0, moved, nil
	}
	n, err := c.compactRun(ctx, p, run)
	return n, true, err
}

// trimRun cuts run to the units whose swap releases at most page objects'
// references (metadata.ReleaseWeight: a manifest entry releases one per
// entry it folds), so that it fits one transaction as a page of plain
// entries does; the rest waits for the next visit. A run cut to one unit
// that is not a manifest entry is not worth rewriting: the run after it
// is tried instead (nil: none).
func trimRun(run []unit, page int) []unit {
	w := 0
	for i, u := range run {
		for _, s := range u.segs {
			w += metadata.ReleaseWeight(s)
		}
		if i > 0 && w > page {
			if i == 1 && !run[0].segs[0].Manifest {
				return trimRun(run[1:], page)
			}
			return run[:i]
		}
	}
	if len(run) == 1 && !run[0].segs[0].Manifest {
		return nil
	}
	return run
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
func (c *Compactor) planRuns(units []unit, end bool, now time.Time) runPlan {
	switch {
	case !end && len(units) == 1:
		return runPlan{settled: units[0].end()} // one object fills the page: no small unit
	case !end && len(units) > 1:
		units = units[:len(units)-1] // it may go on in the next page
	}
	var plan runPlan
	pending := false
	groups := c.groupRuns(units)
	for i, g := range groups {
		if len(g) == 1 && (2*g[0].size >= c.TargetBytes || i < len(groups)-1) {
			if !pending {
				plan.settled = g[0].end()
			}
			continue
		}
		pending = true
		if plan.run == nil && c.worthRewriting(g, now) {
			plan.run = g
		}
	}
	return plan
}

// groupRuns cuts units into candidate runs: each big unit (at least half
// the target) alone, and consecutive small ones together up to the target.
func (c *Compactor) groupRuns(units []unit) [][]unit {
	target := c.TargetBytes
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
// or whose newest object is older than MinAge.
func (c *Compactor) worthRewriting(run []unit, now time.Time) bool {
	if len(run) < 2 {
		return false
	}
	var size int64
	for _, u := range run {
		size += u.size
	}
	return 2*size >= c.TargetBytes || now.Sub(objectTime(run[len(run)-1].object())) >= c.MinAge
}
