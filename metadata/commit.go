package metadata

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// PartitionKey names one partition.
type PartitionKey struct {
	Topic     TopicID
	Partition int32
}

// SegmentCommit is one partition's part of an uploaded object: the segment
// and the producers that wrote in it, each with its epoch, the time the
// broker last saw it and its batches in the segment (the last
// ProducerWindow of them). Producers is stored as the segment's producer
// delta (see producers.go): a commit never rewrites the partition's whole
// producer table.
//
// Fence, when set, is the condition that holds only while the committer
// owns the partition (a cluster; nil: one node, unfenced).
type SegmentCommit struct {
	Segment   Segment
	Producers []ProducerState
	Fence     *Cond
}

// GapError is CommitSegments' answer when segments do not start at their
// partitions' next offsets: it names every such partition, so that the
// caller can take them out and commit the rest. Nothing was written. It
// matches ErrOffsetGap.
type GapError struct {
	Partitions []PartitionKey
	first      error // the first partition's details
}

func (e *GapError) Error() string {
	if len(e.Partitions) == 1 {
		return e.first.Error()
	}
	return fmt.Sprintf("%v (and %d more partitions)", e.first, len(e.Partitions)-1)
}

// Unwrap returns ErrOffsetGap.
func (e *GapError) Unwrap() error { return ErrOffsetGap }

// CommitSegments records, in one transaction, that an uploaded object holds
// the given segments (at most one per partition). Each segment must start
// exactly at its partition's NextOffset, so the committed log never has a gap
// or an overlap (a *GapError naming every partition that does not,
// otherwise; nothing is written). Segments of partitions that no longer
// exist (deleted topics) are dropped and returned as skipped. Lost
// compare-and-swaps (a concurrent DeleteRecords, say) are retried on fresh
// state. The first attempt plans from the states the previous commits wrote
// (commitCache), when it has them. A commit of an object the orphan sweep
// claimed fails with ErrObjectSwept.
//
// A transaction that fails without a definite answer (a remote store's
// timeout: it may have applied) is settled by reading back whether the
// object is indexed (ObjectKnown); when that read fails too, the error is
// returned, and the caller must settle with ObjectKnown before it commits
// the same object again (a second commit would find its own segments and
// report a gap).
//
// Every Fence joins the transaction's conditions. A gap or a lost
// compare-and-swap is first checked against the fences (their keys are read
// back): when any failed, the answer is a *NotOwnerError naming those
// partitions, nothing is written, and nothing is retried.
func (s *Store) CommitSegments(ctx context.Context, commits []SegmentCommit) (skipped []PartitionKey, err error) {
	for _, c := range commits {
		if c.Segment.Object != commits[0].Segment.Object {
			return nil, fmt.Errorf("metadata: commit segments: every segment must be in the same object")
		}
	}
	cached := true
	for range maxCASRetries + 1 { // one more for a stale cache
		plan, err := s.planCommit(ctx, commits, cached)
		if err != nil && cached && errors.Is(err, ErrOffsetGap) {
			// Judge a gap on the stored state, not on the cache's.
			s.commits.forget(commits)
			cached = false
			continue
		}
		if err != nil && errors.Is(err, ErrOffsetGap) {
			// A new owner's commits are a gap to the old one: say so.
			if nerr := s.notOwner(ctx, commits); nerr != nil {
				return nil, nerr
			}
		}
		if err != nil {
			return nil, err
		}
		if len(plan.ops) == 0 {
			return plan.skipped, nil
		}
		rev, err := s.kv.Txn(ctx, plan.conds, plan.ops)
		if err == nil {
			s.commits.remember(plan.keys, plan.states, rev)
			return plan.skipped, nil
		}
		s.commits.forget(commits)
		if !IsConflict(err) {
			if known, kerr := s.ObjectKnown(ctx, commits[0].Segment.Object); kerr == nil && known {
				return plan.skipped, nil // it applied; only the answer was lost
			}
			return nil, fmt.Errorf("metadata: commit segments: %w", err)
		}
		if nerr := s.notOwner(ctx, commits); nerr != nil {
			return nil, nerr
		}
		if err := s.sweptErr(ctx, commits[0].Segment.Object); err != nil {
			return nil, err
		}
		cached = false
	}
	return nil, fmt.Errorf("metadata: commit segments: %w", ErrTooManyRetries)
}

// notOwner returns a *NotOwnerError naming the commits whose fence failed,
// the error of reading a fence, or nil when every fence holds.
func (s *Store) notOwner(ctx context.Context, commits []SegmentCommit) error {
	keys := make([]PartitionKey, len(commits))
	fences := make([]*Cond, len(commits))
	for i, c := range commits {
		keys[i], fences[i] = PartitionKey{c.Segment.Topic, c.Segment.Partition}, c.Fence
	}
	failed, err := s.failedFences(ctx, keys, fences)
	if err != nil {
		return fmt.Errorf("metadata: commit segments: %w", err)
	}
	if len(failed) > 0 {
		return &NotOwnerError{Partitions: failed}
	}
	return nil
}

// commitPlan is one attempt of a CommitSegments: its transaction, the
// partition states it writes (by key) and the partitions it skips.
type commitPlan struct {
	conds   []Cond
	ops     []Op
	keys    []string
	states  []PartitionState
	skipped []PartitionKey
}

// planCommit plans a commit on the stored partition states, or on the
// cached ones where cached is set and the cache has them.
func (s *Store) planCommit(ctx context.Context, commits []SegmentCommit, cached bool) (commitPlan, error) {
	var plan commitPlan
	var gap *GapError
	for _, c := range commits {
		seg := c.Segment
		key := partKey(seg.Topic, seg.Partition)
		st, ok := PartitionState{}, false
		if cached {
			st, ok = s.commits.get(key)
		}
		if !ok {
			var err error
			st, ok, err = s.PartitionState(ctx, seg.Topic, seg.Partition)
			if err != nil {
				return commitPlan{}, err
			}
		}
		if !ok {
			plan.skipped = append(plan.skipped, PartitionKey{seg.Topic, seg.Partition})
			plan.conds = append(plan.conds, Cond{Key: key, Version: 0}) // still absent when we write
			continue
		}
		if seg.BaseOffset != st.NextOffset || seg.EndOffset <= seg.BaseOffset {
			if gap == nil {
				gap = &GapError{first: fmt.Errorf("metadata: partition %s/%d: segment [%d,%d) after next offset %d: %w",
					seg.Topic, seg.Partition, seg.BaseOffset, seg.EndOffset, st.NextOffset, ErrOffsetGap)}
			}
			gap.Partitions = append(gap.Partitions, PartitionKey{seg.Topic, seg.Partition})
			continue
		}
		plan.conds = append(plan.conds, Cond{Key: key, Version: st.Version})
		if c.Fence != nil {
			plan.conds = append(plan.conds, *c.Fence)
		}
		if len(st.Producers) > 0 {
			mc, mo := migrateProducerOps(seg.Topic, seg.Partition, st.Producers)
			plan.conds, plan.ops = append(plan.conds, mc...), append(plan.ops, mo...)
			st.Producers = nil
		}
		st.NextOffset = seg.EndOffset
		plan.ops = append(plan.ops, putJSON(key, st), putJSON(indexKey(seg.Topic, seg.Partition, seg.BaseOffset), seg))
		plan.ops = append(plan.ops, producerDeltaOps(seg, c.Producers)...)
		plan.keys, plan.states = append(plan.keys, key), append(plan.states, st)
	}
	if gap != nil {
		return commitPlan{}, gap
	}
	c, o := objectRefOps(commits, len(commits)-len(plan.skipped))
	plan.conds, plan.ops = append(plan.conds, c...), append(plan.ops, o...)
	return plan, nil
}

// objectRefOps creates the reference record of a freshly uploaded object,
// counting the segments that point into it; an object nothing uses (every
// partition in it was deleted meanwhile) is garbage at once.
func objectRefOps(commits []SegmentCommit, refs int) ([]Cond, []Op) {
	if len(commits) == 0 {
		return nil, nil
	}
	obj := commits[0].Segment.Object
	conds := newObjectConds(obj)
	if refs > 0 {
		return conds, []Op{putJSON(objectRecordKey(obj), ObjectRecord{Refs: refs, CreatedMs: time.Now().UnixMilli()})}
	}
	return conds, []Op{putJSON(garbageRecordKey(obj), GarbageRecord{Key: obj, DeleteAfterMs: time.Now().UnixMilli()})}
}
