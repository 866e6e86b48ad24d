package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/manifest"
)

// Index fold: every upload commits one index key per partition it holds,
// and compaction, which folds them too, waits for its MinAge and reads all
// their data back. The folder bounds a partition's index keys without any
// data read: when a partition has more than Keys upload entries not folded
// yet, it writes the oldest run of them (up to MaxRun, never the newest
// foldKeep) into a manifest object and swaps the run's keys for one
// manifest entry (metadata.FoldSegments). A partition's keys then stay
// within about Keys plus one per fold, until compaction or retention
// takes the manifest entries too.

// foldKeep is how many of a partition's newest entries a fold leaves
// alone: readers at the tail keep reading plain entries.
const foldKeep = 4

// maxFoldsPerVisit bounds the folds of one partition in one pass.
const maxFoldsPerVisit = 64

// Folder runs the index fold in passes and keeps a cursor per partition
// between them. Every field but Logger's handlers is required.
type Folder struct {
	Meta *metadata.Store
	// Put writes a new object under key (the owner's PUT, as compaction's).
	Put func(ctx context.Context, key string, obj []byte) error
	// Keys is how many upload entries a partition may have unfolded;
	// MaxRun bounds the entries one manifest holds (removing a manifest
	// entry, by retention or compaction, releases one reference per entry,
	// which must fit one metadata transaction).
	Keys, MaxRun int
	// Folds, FoldedKeys and ManifestBytes count folds, the index keys they
	// replaced and the manifest bytes they wrote.
	Folds, FoldedKeys, ManifestBytes prometheus.Counter
	Logger                           *slog.Logger

	// mu guards from, and is held for a whole pass.
	mu sync.Mutex
	// from holds, per partition, the offset its next visit reads the index
	// from: below it nothing is ever folded.
	from map[metadata.PartitionKey]int64
}

// Pass folds, for every partition, the runs of upload entries past the
// bound.
func (f *Folder) Pass(ctx context.Context, parts []Partition) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.from == nil {
		f.from = map[metadata.PartitionKey]int64{}
	}
	live := make(map[metadata.PartitionKey]bool, len(parts))
	var errs []error
	for _, p := range parts {
		live[metadata.PartitionKey{Topic: p.TopicID, Partition: p.Index}] = true
		for range maxFoldsPerVisit {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			folded, err := f.foldNext(ctx, p)
			if err != nil && !metadata.IsConflict(err) {
				errs = append(errs, fmt.Errorf("%s/%d: %w", p.Topic, p.Index, err))
			}
			if !folded || err != nil {
				break
			}
		}
	}
	for k := range f.from {
		if !live[k] {
			delete(f.from, k)
		}
	}
	return errors.Join(errs...)
}

// foldNext reads a page of p's index from its cursor and folds the run
// that planFold picks, if any.
func (f *Folder) foldNext(ctx context.Context, p Partition) (bool, error) {
	key := metadata.PartitionKey{Topic: p.TopicID, Partition: p.Index}
	limit := f.Keys + f.MaxRun
	segs, err := f.Meta.Segments(ctx, p.TopicID, p.Index, f.from[key], limit)
	if err != nil {
		return false, err
	}
	plan := planFold(segs, p.LogStart(), len(segs) == limit, f.Keys, f.MaxRun)
	f.from[key] = max(f.from[key], plan.settled)
	if plan.run == nil {
		return false, nil
	}
	return true, f.foldRun(ctx, p, plan.run)
}

// foldRun writes run's manifest and swaps it into the index.
func (f *Folder) foldRun(ctx context.Context, p Partition, run []metadata.Segment) error {
	key := manifest.Key(p.TopicID, p.Index, run[0].BaseOffset)
	body := manifest.Encode(run)
	if err := f.Put(ctx, key, body); err != nil {
		return fmt.Errorf("put manifest %s: %w", key, err) // if it landed, an orphan
	}
	err := f.Meta.FoldSegments(ctx, run, metadata.ManifestEntry(run, key), p.Fence...)
	if err != nil {
		if !metadata.IsUncertain(err) {
			f.discard(ctx, key) // the fold did not apply: nothing refers to it
		}
		return fmt.Errorf("fold into %s: %w", key, err)
	}
	f.Folds.Inc()
	f.FoldedKeys.Add(float64(len(run)))
	f.ManifestBytes.Add(float64(len(body)))
	f.Logger.Debug("folded index entries", "topic", p.Topic, "partition", p.Index,
		"entries", len(run), "from", run[0].BaseOffset, "to", run[len(run)-1].EndOffset, "manifest", key)
	return nil
}

// discard marks a manifest no fold committed as garbage; if that fails
// too, the orphan sweep deletes it later.
func (f *Folder) discard(ctx context.Context, key string) {
	if err := f.Meta.MarkGarbage(ctx, key, 0); err != nil {
		f.Logger.Warn("could not mark an unused manifest as garbage; the orphan sweep will delete it", "key", key, "err", err)
	}
}

// foldPlan is what one visit found in a page of the index: the run to
// fold (nil: none) and the offset below which nothing will ever be folded.
type foldPlan struct {
	run     []metadata.Segment
	settled int64
}

// foldable reports whether an index entry may go into a manifest: an
// upload entry still in the log (manifests and compacted chunks are
// already few per byte).
func foldable(s metadata.Segment, logStart int64) bool {
	return !s.Manifest && !strings.HasPrefix(s.Object, CompactedPrefix) && s.EndOffset > logStart
}

// planFold picks, in segs (a page of the index; full: more may follow),
// the run to fold: the first run of at least two consecutive foldable
// entries, once the page holds more than keys foldable ones (or is full of
// entries, so the count is not known), at most maxRun long, and never the
// page's newest foldKeep entries when the page ends the index. The cursor
// moves past every entry that can never be folded: the unfoldable ones and
// a lone foldable one with an unfoldable one after it.
func planFold(segs []metadata.Segment, logStart int64, full bool, keys, maxRun int) foldPlan {
	var plan foldPlan
	runs, count := foldRuns(segs, logStart)
	for len(runs) > 0 && len(runs[0]) == 1 && runs[0][0].EndOffset < segs[len(segs)-1].EndOffset {
		runs = runs[1:] // maximal, and an entry follows it in the page
	}
	switch {
	case len(runs) > 0:
		plan.settled = runs[0][0].BaseOffset
	case len(segs) > 0:
		plan.settled = segs[len(segs)-1].EndOffset
	}
	if len(runs) == 0 || (count <= keys && !full) {
		return plan
	}
	run := runs[0]
	if !full && len(runs) == 1 {
		run = run[:max(0, len(run)-foldKeep)]
	}
	if len(run) > maxRun {
		run = run[:maxRun]
	}
	if len(run) >= 2 {
		plan.run = run
	}
	return plan
}

// foldRuns splits segs into maximal runs of consecutive foldable entries
// and counts the foldable entries.
func foldRuns(segs []metadata.Segment, logStart int64) ([][]metadata.Segment, int) {
	var runs [][]metadata.Segment
	count, start := 0, -1
	flush := func(end int) {
		if start >= 0 {
			runs = append(runs, segs[start:end])
		}
		start = -1
	}
	for i, s := range segs {
		if !foldable(s, logStart) {
			flush(i)
			continue
		}
		count++
		if start >= 0 && s.BaseOffset != segs[i-1].EndOffset {
			flush(i)
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(segs))
	return runs, count
}
