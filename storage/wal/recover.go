package wal

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
)

// recoverer rebuilds the log's state from the segment files. It runs in
// Open, before the flusher exists, and owns everything it opens until it
// hands the segments over.
type recoverer struct {
	fs     FS
	dir    string
	repair bool
	log    *slog.Logger
	sync   syncer
	replay replayFunc
	drop   replayFunc // Options.OnRepairDrop; may be nil
	segs   []*segment // valid segments so far, oldest first
	head   Pos        // end of the last valid frame so far
}

// run recovers every segment in order and returns the retained segments
// (at least one) and the head position.
func (r *recoverer) run() ([]*segment, Pos, error) {
	starts, err := r.listSegments()
	if err != nil {
		return nil, 0, err
	}
	for i, start := range starts {
		stop, err := r.recoverSegment(start, starts[i+1:])
		if err != nil {
			r.closeAll()
			return nil, 0, err
		}
		if stop {
			break
		}
	}
	// New frames go only into a segment of today's version, so a version
	// 1 tail is sealed where it ends and a fresh segment follows it.
	if len(r.segs) == 0 || r.segs[len(r.segs)-1].version != formatVersion {
		// An empty version 1 tail starts where the new segment would:
		// the new one replaces its file (createSegment renames over it),
		// so it must not stay in the list, where a Release would delete
		// the live file by that name.
		if n := len(r.segs); n > 0 && r.segs[n-1].start == r.head {
			r.segs[n-1].f.Close()
			r.segs = r.segs[:n-1]
		}
		seg, err := r.sync.createSegment(r.head)
		if err != nil {
			r.closeAll()
			return nil, 0, err
		}
		r.segs = append(r.segs, seg)
	}
	// Frames written before a process crash but never fsynced survive in
	// the page cache and were just replayed: make them durable before the
	// caller exposes them, so a later power loss cannot take them back.
	last := r.segs[len(r.segs)-1]
	if _, err := r.sync.syncFile(last.f, last.path); err != nil {
		r.closeAll()
		return nil, 0, err
	}
	return r.segs, r.head, nil
}

// listSegments returns the starts of the segment files in the directory,
// ascending, after removing leftovers of interrupted segment creation.
func (r *recoverer) listSegments() ([]Pos, error) {
	names, err := r.fs.ReadDir(r.dir)
	if err != nil {
		return nil, fmt.Errorf("wal: list %s: %w", r.dir, err)
	}
	var starts []Pos
	for _, name := range names {
		if strings.HasSuffix(name, segmentExt+tmpExt) {
			if err := r.fs.Remove(filepath.Join(r.dir, name)); err != nil {
				return nil, fmt.Errorf("wal: remove leftover %s: %w", name, err)
			}
			continue
		}
		if start, ok := parseSegmentName(name); ok {
			starts = append(starts, start)
		}
	}
	slices.Sort(starts)
	return starts, nil
}

// recoverSegment scans the segment at start. later are the starts of the
// segments after it. stop says the log was cut here by repair.
func (r *recoverer) recoverSegment(start Pos, later []Pos) (stop bool, err error) {
	path := filepath.Join(r.dir, segmentName(start))
	if len(r.segs) > 0 && start != r.head {
		reason := fmt.Sprintf("segment starts at pos %d but the previous one ends at %d", start, r.head)
		return true, r.corrupt(&segment{start: start, path: path}, 0, reason, later)
	}
	f, err := r.fs.OpenFile(path)
	if err != nil {
		return false, fmt.Errorf("wal: open segment %s: %w", path, err)
	}
	seg := &segment{start: start, path: path, f: f}
	res, err := scanSegment(seg, r.replay)
	switch {
	case err != nil:
		_ = f.Close()
		return false, err
	case res.bad == nil:
		r.keep(seg, res.end)
		return false, nil
	case len(later) > 0:
		// Every segment but the last was fsynced before its successor was
		// created: all of it was acknowledged.
		return true, r.corrupt(seg, res.bad.offset, res.bad.reason, later)
	}
	torn, reason, err := classifyTail(seg, res)
	if err != nil {
		_ = f.Close()
		return false, err
	}
	if torn {
		return false, r.truncateTail(seg, res)
	}
	return true, r.corrupt(seg, res.bad.offset, reason, later)
}

// classifyTail decides whether the damage in the last segment is a torn
// tail, and otherwise gives the reason it is corruption. In a version 2
// segment the damage is torn unless a valid flush commit follows it: that
// commit was written only after its flush's fsync returned, and a flush is
// written only after the one before it was fsynced, so everything before
// the commit was acknowledged. A version 1 segment has no commits, and the
// shape of the damage is all there is to go by.
func classifyTail(seg *segment, res scanResult) (torn bool, reason string, err error) {
	if seg.version != formatVersion { // version 1, or a bad header (never torn)
		return res.bad.torn, res.bad.reason, nil
	}
	at, err := findCommit(seg, res.bad.offset, res.size)
	if err != nil || at < 0 {
		return err == nil, res.bad.reason, err
	}
	return false, fmt.Sprintf("%s, before the flush commit at offset %d: acknowledged data is damaged",
		res.bad.reason, at), nil
}

// keep retains seg, whose valid frames end at file offset end.
func (r *recoverer) keep(seg *segment, end int64) {
	r.segs = append(r.segs, seg)
	r.head = seg.start + Pos(end-segmentHeaderSize)
}

// truncateTail cuts a torn tail off the last segment, durably.
func (r *recoverer) truncateTail(seg *segment, res scanResult) error {
	r.log.Warn("wal: truncating torn tail; the dropped bytes were never acknowledged",
		"file", seg.path, "offset", res.bad.offset, "dropped_bytes", res.size-res.bad.offset,
		"reason", res.bad.reason)
	if err := r.truncate(seg, res.bad.offset); err != nil {
		return err
	}
	r.keep(seg, res.bad.offset)
	return nil
}

func (r *recoverer) truncate(seg *segment, off int64) error {
	if err := seg.f.Truncate(off); err != nil {
		_ = seg.f.Close()
		return fmt.Errorf("wal: truncate %s at offset %d: %w", seg.path, off, err)
	}
	if _, err := r.sync.syncFile(seg.f, seg.path); err != nil {
		_ = seg.f.Close()
		return err
	}
	return nil
}

// corrupt handles damage at off in seg: a *CorruptionError, or with repair
// the log is cut there (later segments deleted, seg truncated or deleted).
// seg.f may be nil when the segment was not opened.
func (r *recoverer) corrupt(seg *segment, off int64, reason string, later []Pos) error {
	cerr := &CorruptionError{File: seg.path, Offset: off, Reason: reason}
	if !r.repair {
		r.closeFile(seg)
		return cerr
	}
	r.log.Error("wal: REPAIR: cutting the log at corruption; acknowledged data after it is lost",
		"file", seg.path, "offset", off, "reason", reason, "dropped_bytes", r.droppedBytes(seg, off, later),
		"deleted_segments", segmentNames(later))
	if err := r.reportDropped(seg, off, later); err != nil {
		r.closeFile(seg)
		return err
	}
	// Newest first, so a crash part-way leaves a log without gaps.
	for i := len(later) - 1; i >= 0; i-- {
		if err := r.sync.removeSegment(filepath.Join(r.dir, segmentName(later[i]))); err != nil {
			r.closeFile(seg)
			return err
		}
	}
	if off < segmentHeaderSize {
		r.closeFile(seg)
		if len(r.segs) == 0 {
			r.head = seg.start
		}
		return r.sync.removeSegment(seg.path)
	}
	if err := r.truncate(seg, off); err != nil {
		return err
	}
	r.keep(seg, off)
	return nil
}

func (r *recoverer) closeFile(seg *segment) {
	if seg.f != nil {
		_ = seg.f.Close()
	}
}

func (r *recoverer) closeAll() {
	for _, seg := range r.segs {
		r.closeFile(seg)
	}
	r.segs = nil
}
