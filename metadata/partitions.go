package metadata

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

func jsonDecode(it Item, v any) error {
	if err := json.Unmarshal(it.Value, v); err != nil {
		return fmt.Errorf("metadata: decode %s: %w", it.Key, err)
	}
	return nil
}

// PartitionState returns one partition's state; ok is false when the
// partition (or its topic) does not exist.
func (s *Store) PartitionState(ctx context.Context, id TopicID, p int32) (PartitionState, bool, error) {
	var st PartitionState
	v, ok, err := s.getJSON(ctx, partKey(id, p), &st)
	st.Version = v
	return st, ok, err
}

// TopicPartitionStates returns the states of a topic's partitions by
// partition, in one range read (a broker of a cluster loads every topic at
// start and only the partitions it acquires in full).
func (s *Store) TopicPartitionStates(ctx context.Context, id TopicID) (map[int32]PartitionState, error) {
	items, err := s.kv.Range(ctx, partPrefix(id), PrefixEnd(partPrefix(id)), 0, false)
	if err != nil {
		return nil, fmt.Errorf("metadata: partition states of topic %s: %w", id, err)
	}
	out := make(map[int32]PartitionState, len(items))
	for _, it := range items {
		p, err := strconv.ParseInt(strings.TrimPrefix(it.Key, partPrefix(id)), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("metadata: partition state key %q: %w", it.Key, err)
		}
		var st PartitionState
		if err := jsonDecode(it, &st); err != nil {
			return nil, err
		}
		st.Version = it.Version
		out[int32(p)] = st
	}
	return out, nil
}

// SetLogStartOffset raises a partition's log start offset (DeleteRecords,
// retention). It never lowers it. A fence that no longer holds fails it with
// a *NotOwnerError, never retried.
func (s *Store) SetLogStartOffset(ctx context.Context, id TopicID, p int32, offset int64, fence ...Cond) error {
	for range maxCASRetries {
		st, ok, err := s.PartitionState(ctx, id, p)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("metadata: partition %s/%d: %w", id, p, ErrUnknownTopic)
		}
		if offset <= st.LogStartOffset {
			return nil
		}
		st.LogStartOffset = offset
		conds := fenced([]Cond{{Key: partKey(id, p), Version: st.Version}}, fence)
		_, err = s.kv.Txn(ctx, conds, []Op{putJSON(partKey(id, p), st)})
		s.commits.drop(partKey(id, p))
		if !IsConflict(err) {
			return err
		}
		if nerr := s.checkFence(ctx, id, p, fence); nerr != nil {
			return nerr
		}
	}
	return fmt.Errorf("metadata: set log start offset %s/%d: %w", id, p, ErrTooManyRetries)
}

// FloorSegment returns the segment with the greatest base offset <= offset;
// ok is false when there is none.
func (s *Store) FloorSegment(ctx context.Context, id TopicID, p int32, offset int64) (Segment, bool, error) {
	prefix := indexPartPrefix(id, p)
	items, err := s.kv.Range(ctx, prefix, indexKey(id, p, offset)+"\x00", 1, true)
	if err != nil || len(items) == 0 {
		return Segment{}, false, err
	}
	var seg Segment
	err = jsonDecode(items[0], &seg)
	seg.Version = items[0].Version
	return seg, true, err
}

// Segments returns up to limit segments with base offset >= from, in offset
// order (limit <= 0: all).
func (s *Store) Segments(ctx context.Context, id TopicID, p int32, from int64, limit int) ([]Segment, error) {
	items, err := s.kv.Range(ctx, indexKey(id, p, from), PrefixEnd(indexPartPrefix(id, p)), limit, false)
	if err != nil {
		return nil, err
	}
	segs := make([]Segment, len(items))
	for i, it := range items {
		if err := jsonDecode(it, &segs[i]); err != nil {
			return nil, err
		}
		segs[i].Version = it.Version
	}
	return segs, nil
}
