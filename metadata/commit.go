package metadata

import (
	"context"
	"fmt"
	"time"
)

// PartitionKey names one partition.
type PartitionKey struct {
	Topic     TopicID
	Partition int32
}

// SegmentCommit is one partition's part of an uploaded object: the segment
// and the partition's producer state as of the segment's end.
type SegmentCommit struct {
	Segment   Segment
	Producers []ProducerState
}

// CommitSegments records, in one transaction, that an uploaded object holds
// the given segments (at most one per partition). Each segment must start
// exactly at its partition's NextOffset, so the committed log never has a gap
// or an overlap (ErrOffsetGap otherwise). Segments of partitions that no
// longer exist (deleted topics) are dropped and returned as skipped. Lost
// compare-and-swaps (a concurrent DeleteRecords, say) are retried on fresh
// state.
func (s *Store) CommitSegments(ctx context.Context, commits []SegmentCommit) (skipped []PartitionKey, err error) {
	for _, c := range commits {
		if c.Segment.Object != commits[0].Segment.Object {
			return nil, fmt.Errorf("metadata: commit segments: every segment must be in the same object")
		}
	}
	for range maxCASRetries {
		conds, ops, skipped, err := s.planCommit(ctx, commits)
		if err != nil {
			return nil, err
		}
		if len(ops) == 0 {
			return skipped, nil
		}
		_, err = s.kv.Txn(ctx, conds, ops)
		if err == nil {
			return skipped, nil
		}
		if !IsConflict(err) {
			return nil, fmt.Errorf("metadata: commit segments: %w", err)
		}
	}
	return nil, fmt.Errorf("metadata: commit segments: %w", ErrTooManyRetries)
}

func (s *Store) planCommit(ctx context.Context, commits []SegmentCommit) ([]Cond, []Op, []PartitionKey, error) {
	var conds []Cond
	var ops []Op
	var skipped []PartitionKey

	for _, c := range commits {
		seg := c.Segment
		st, ok, err := s.PartitionState(ctx, seg.Topic, seg.Partition)
		if err != nil {
			return nil, nil, nil, err
		}
		key := partKey(seg.Topic, seg.Partition)
		if !ok {
			skipped = append(skipped, PartitionKey{seg.Topic, seg.Partition})
			conds = append(conds, Cond{Key: key, Version: 0}) // still absent when we write
			continue
		}
		if seg.BaseOffset != st.NextOffset || seg.EndOffset <= seg.BaseOffset {
			return nil, nil, nil, fmt.Errorf("metadata: partition %s/%d: segment [%d,%d) after next offset %d: %w",
				seg.Topic, seg.Partition, seg.BaseOffset, seg.EndOffset, st.NextOffset, ErrOffsetGap)
		}
		st.NextOffset = seg.EndOffset
		st.Producers = c.Producers
		conds = append(conds, Cond{Key: key, Version: st.Version})
		ops = append(ops, putJSON(key, st), putJSON(indexKey(seg.Topic, seg.Partition, seg.BaseOffset), seg))
	}
	c, o := objectRefOps(commits, len(commits)-len(skipped))
	return append(conds, c...), append(ops, o...), skipped, nil
}

// objectRefOps creates the reference record of a freshly uploaded object,
// counting the segments that point into it; an object nothing uses (every
// partition in it was deleted meanwhile) is garbage at once.
func objectRefOps(commits []SegmentCommit, refs int) ([]Cond, []Op) {
	if len(commits) == 0 {
		return nil, nil
	}
	obj := commits[0].Segment.Object
	conds := []Cond{{Key: objectRecordKey(obj), Version: 0}}
	if refs > 0 {
		return conds, []Op{putJSON(objectRecordKey(obj), ObjectRecord{Refs: refs, CreatedMs: time.Now().UnixMilli()})}
	}
	return conds, []Op{putJSON(garbageRecordKey(obj), GarbageRecord{Key: obj, DeleteAfterMs: time.Now().UnixMilli()})}
}
