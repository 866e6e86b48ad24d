package metadata

import (
	"context"
	"fmt"
	"time"
)

// ReplaceSegments atomically swaps old, consecutive segments of one
// partition for repl, consecutive segments in one new object that cover
// exactly the same offsets (compaction). It fails with ErrConflict if any
// old segment changed since it was read (retention deleted it, say); the
// caller then discards repl's object. A reader sees either the old segments
// or the new ones, never a gap. A fence (the partition's owner key, in a
// cluster) that no longer holds fails it with a *NotOwnerError.
func (s *Store) ReplaceSegments(ctx context.Context, old, repl []Segment, grace time.Duration, fence ...Cond) error {
	if err := checkCovers(old, repl); err != nil {
		return err
	}
	old, err := s.withFolded(ctx, old)
	if err != nil {
		return err
	}
	delta := map[string]int{}
	var conds []Cond
	var ops []Op
	for _, seg := range old {
		key := indexKey(seg.Topic, seg.Partition, seg.BaseOffset)
		conds = append(conds, Cond{Key: key, Version: seg.Version})
		ops = append(ops, Delete(key))
	}
	if err := releaseDelta(delta, old); err != nil {
		return err
	}
	for _, seg := range repl { // a put after a delete of the same key wins
		ops = append(ops, putJSON(indexKey(seg.Topic, seg.Partition, seg.BaseOffset), seg))
	}
	obj := repl[0].Object
	ops = append(ops, putJSON(objectRecordKey(obj), ObjectRecord{Refs: len(repl), CreatedMs: time.Now().UnixMilli()}))
	conds = append(conds, newObjectConds(obj)...)
	rc, ro, err := s.refPlan(ctx, delta, grace)
	if err != nil {
		return err
	}
	_, err = s.kv.Txn(ctx, fenced(append(conds, rc...), fence), append(ops, ro...))
	if IsConflict(err) {
		if nerr := s.checkFence(ctx, old[0].Topic, old[0].Partition, fence); nerr != nil {
			return nerr
		}
		if serr := s.sweptErr(ctx, obj); serr != nil {
			return serr
		}
	}
	return err
}

// checkCovers checks that old and repl are each consecutive, that repl is
// in one object, and that both cover the same offsets.
func checkCovers(old, repl []Segment) error {
	if len(old) == 0 || len(repl) == 0 {
		return fmt.Errorf("metadata: replace segments: nothing to replace")
	}
	for _, list := range [][]Segment{old, repl} {
		for i := 1; i < len(list); i++ {
			if list[i].BaseOffset != list[i-1].EndOffset {
				return fmt.Errorf("metadata: replace segments: gap or overlap at offset %d", list[i].BaseOffset)
			}
		}
	}
	for _, seg := range repl {
		if seg.Object != repl[0].Object {
			return fmt.Errorf("metadata: replace segments: the replacements span several objects")
		}
	}
	if repl[0].BaseOffset != old[0].BaseOffset || repl[len(repl)-1].EndOffset != old[len(old)-1].EndOffset {
		return fmt.Errorf("metadata: replacement [%d,%d) does not cover [%d,%d)",
			repl[0].BaseOffset, repl[len(repl)-1].EndOffset, old[0].BaseOffset, old[len(old)-1].EndOffset)
	}
	return nil
}

// DeleteSegments removes the oldest segments of one partition (retention,
// or segments below a DeleteRecords log start) and raises the log start
// offset to at least newLogStart, in one transaction when the KV takes it.
// Else the oldest segments go a chunk per transaction first, each raising
// the log start past its own, so that every step leaves a log without a
// hole; an error leaves the chunks before it done. ErrConflict means a
// segment or the partition changed meanwhile; the caller tries again later.
// A fence that no longer holds fails it with a *NotOwnerError instead.
func (s *Store) DeleteSegments(ctx context.Context, id TopicID, p int32, segs []Segment, newLogStart int64, grace time.Duration, fence ...Cond) error {
	// Each segment adds a condition and a delete, each object it releases
	// (a manifest entry's folded ones too) at most a condition and two
	// writes; the partition state and the fence the rest.
	segs, err := s.withFolded(ctx, segs)
	if err != nil {
		return err
	}
	if l := kvLimits(s.kv); l.MaxOps > 0 {
		for n := deleteChunk(segs, max(1, l.MaxOps/3-1)); n < len(segs); n = deleteChunk(segs, max(1, l.MaxOps/3-1)) {
			if err := s.deleteSegments(ctx, id, p, segs[:n], segs[n-1].EndOffset, grace, fence...); err != nil {
				return err
			}
			segs = segs[n:]
		}
	}
	return s.deleteSegments(ctx, id, p, segs, newLogStart, grace, fence...)
}

// deleteChunk returns how many of the oldest segs one transaction of
// DeleteSegments removes: as many as weigh at most budget, and at least one.
func deleteChunk(segs []Segment, budget int) int {
	n, w := 0, 0
	for n < len(segs) && (n == 0 || w+ReleaseWeight(segs[n]) <= budget) {
		w += ReleaseWeight(segs[n])
		n++
	}
	return n
}

// deleteSegments is one transaction of DeleteSegments.
func (s *Store) deleteSegments(ctx context.Context, id TopicID, p int32, segs []Segment, newLogStart int64, grace time.Duration, fence ...Cond) error {
	st, ok, err := s.PartitionState(ctx, id, p)
	if err != nil || !ok {
		return err
	}
	conds := []Cond{{Key: partKey(id, p), Version: st.Version}}
	var ops []Op
	delta := map[string]int{}
	for _, seg := range segs {
		key := indexKey(id, p, seg.BaseOffset)
		conds = append(conds, Cond{Key: key, Version: seg.Version})
		ops = append(ops, Delete(key))
	}
	if err := releaseDelta(delta, segs); err != nil {
		return err
	}
	if newLogStart > st.LogStartOffset {
		st.LogStartOffset = newLogStart
		ops = append(ops, putJSON(partKey(id, p), st))
	} else {
		ops = append(ops, putJSON(partKey(id, p), st)) // bump the version: the CAS above still guards
	}
	rc, ro, err := s.refPlan(ctx, delta, grace)
	if err != nil {
		return err
	}
	_, err = s.kv.Txn(ctx, fenced(append(conds, rc...), fence), append(ops, ro...))
	s.commits.drop(partKey(id, p))
	if IsConflict(err) {
		if nerr := s.checkFence(ctx, id, p, fence); nerr != nil {
			return nerr
		}
	}
	return err
}
