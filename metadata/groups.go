package metadata

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
)

// ClaimGroups makes the caller the owner of every consumer group (one
// node) and returns the fences its WriteGroups calls must present: one
// condition, on the claim. A coordinator that claims after it fences the
// earlier one out: the earlier one's writes fail with ErrConflict from then
// on.
func (s *Store) ClaimGroups(ctx context.Context, nodeID int32) ([]Cond, error) {
	owner := map[string]int64{"node_id": int64(nodeID), "claimed_ms": time.Now().UnixMilli()}
	for range maxCASRetries {
		it, _, err := s.kv.Get(ctx, groupOwnerKey)
		if err != nil {
			return nil, err
		}
		rev, err := s.kv.Txn(ctx, []Cond{{Key: groupOwnerKey, Version: it.Version}}, []Op{putJSON(groupOwnerKey, owner)})
		if err == nil {
			return []Cond{{Key: groupOwnerKey, Version: rev}}, nil
		}
		if !IsConflict(err) {
			return nil, fmt.Errorf("metadata: claim groups: %w", err)
		}
	}
	return nil, fmt.Errorf("metadata: claim groups: %w", ErrTooManyRetries)
}

// LoadGroups returns every stored group of every shard with its offsets,
// committed and pending, sorted by id. Offsets whose group has no record
// (which WriteGroups never leaves behind) are ignored.
func (s *Store) LoadGroups(ctx context.Context) ([]StoredGroup, error) {
	out, err := s.loadGroupsUnder(ctx, "groups/", "offsets/", "txnoffsets/")
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, err
}

// LoadShardGroups returns the stored groups of one coordinator shard with
// their offsets, sorted by escaped id: one range read for the records, one
// for the offsets, one for the offsets pending in transactions.
func (s *Store) LoadShardGroups(ctx context.Context, shard int32) ([]StoredGroup, error) {
	if shard < 0 || shard >= GroupShards {
		return nil, fmt.Errorf("metadata: group shard %d outside [0, %d)", shard, GroupShards)
	}
	return s.loadGroupsUnder(ctx, groupShardPrefix(shard), offsetShardPrefix(shard), txnOffsetShardPrefix(shard))
}

func (s *Store) loadGroupsUnder(ctx context.Context, groups, offsets, txnOffsets string) ([]StoredGroup, error) {
	items, err := s.kv.Range(ctx, groups, PrefixEnd(groups), 0, false)
	if err != nil {
		return nil, err
	}
	out := make([]StoredGroup, 0, len(items))
	for _, it := range items {
		id, err := parseGroupKey(it.Key)
		if err != nil {
			return nil, err
		}
		g := StoredGroup{ID: id, Version: it.Version, Offsets: map[GroupPartition]CommittedOffset{}}
		if err := jsonDecode(it, &g.Record); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	byID := make(map[string]*StoredGroup, len(out))
	for i := range out {
		byID[out[i].ID] = &out[i]
	}
	if err := s.loadOffsets(ctx, offsets, byID); err != nil {
		return out, err
	}
	return out, s.loadTxnOffsets(ctx, txnOffsets, byID)
}

func (s *Store) loadOffsets(ctx context.Context, prefix string, groups map[string]*StoredGroup) error {
	items, err := s.kv.Range(ctx, prefix, PrefixEnd(prefix), 0, false)
	if err != nil {
		return err
	}
	for _, it := range items {
		id, tp, err := parseOffsetKey(it.Key)
		if err != nil {
			return err
		}
		g := groups[id]
		if g == nil {
			continue
		}
		var o CommittedOffset
		if err := jsonDecode(it, &o); err != nil {
			return err
		}
		g.Offsets[tp] = o
	}
	return nil
}

func (s *Store) loadTxnOffsets(ctx context.Context, prefix string, groups map[string]*StoredGroup) error {
	items, err := s.kv.Range(ctx, prefix, PrefixEnd(prefix), 0, false)
	if err != nil {
		return err
	}
	for _, it := range items {
		id, pid, tp, err := parseTxnOffsetKey(it.Key)
		if err != nil {
			return err
		}
		g := groups[id]
		if g == nil {
			continue
		}
		var o PendingOffset
		if err := jsonDecode(it, &o); err != nil {
			return err
		}
		if g.TxnOffsets == nil {
			g.TxnOffsets = map[int64]map[GroupPartition]PendingOffset{}
		}
		if g.TxnOffsets[pid] == nil {
			g.TxnOffsets[pid] = map[GroupPartition]PendingOffset{}
		}
		g.TxnOffsets[pid][tp] = o
	}
	return nil
}

// GroupVersion returns the KV version of a group's record (0: none).
func (s *Store) GroupVersion(ctx context.Context, group string) (int64, error) {
	it, _, err := s.kv.Get(ctx, groupKey(group))
	return it.Version, err
}

// WriteGroups applies writes in one transaction, in order, if every fence
// still holds (the own key of each shard the writes touch, or the one-node
// claim) and every group touched is still at the version given in versions
// (absent: the group has no record). Many groups' commits of many
// partitions thus cost one transaction. It returns the revision written,
// which is the new version of every record it put.
func (s *Store) WriteGroups(ctx context.Context, fences []Cond, versions map[string]int64, writes []GroupWrite) (int64, error) {
	conds := append([]Cond(nil), fences...)
	exists := map[string]bool{}
	var ops []Op
	for _, w := range writes {
		if _, seen := exists[w.Group]; !seen {
			conds = append(conds, Cond{Key: groupKey(w.Group), Version: versions[w.Group]})
			exists[w.Group] = versions[w.Group] != 0
		}
		wops, err := groupWriteOps(w, exists)
		if err != nil {
			return 0, err
		}
		ops = append(ops, wops...)
	}
	rev, err := s.kv.Txn(ctx, conds, ops)
	if err != nil {
		return 0, fmt.Errorf("metadata: write %d group changes: %w", len(writes), err)
	}
	return rev, nil
}

// GroupFenceHolds reports whether a fence's key is still at its version: the
// read-back that tells a lost fence from any other lost compare-and-swap.
func (s *Store) GroupFenceHolds(ctx context.Context, fence Cond) (bool, error) {
	it, _, err := s.kv.Get(ctx, fence.Key)
	if err != nil {
		return false, fmt.Errorf("metadata: read fence %s: %w", fence.Key, err)
	}
	return it.Version == fence.Version, nil
}

// groupWriteOps turns one write into ops, tracking in exists whether the
// group's record exists at this point of the transaction.
func groupWriteOps(w GroupWrite, exists map[string]bool) ([]Op, error) {
	var ops []Op
	if w.Delete {
		ops = append(ops, Delete(groupKey(w.Group)), DeletePrefix(groupOffsetsPrefix(w.Group)),
			DeletePrefix(groupTxnOffsetsPrefix(w.Group)))
		exists[w.Group] = false
	}
	if w.Record != nil {
		ops = append(ops, putJSON(groupKey(w.Group), w.Record))
		exists[w.Group] = true
	}
	for _, pid := range w.DropTxn {
		if pid < 0 {
			return nil, fmt.Errorf("metadata: group %q: producer id %d", w.Group, pid)
		}
		ops = append(ops, DeletePrefix(producerTxnOffsetsPrefix(w.Group, pid)))
	}
	for _, o := range w.Offsets {
		if strings.Contains(o.Topic, "/") {
			return nil, fmt.Errorf("metadata: group %q: topic name %q holds a '/'", w.Group, o.Topic)
		}
		key := offsetKey(w.Group, o.GroupPartition)
		if o.Offset == nil {
			ops = append(ops, Delete(key))
			continue
		}
		if !exists[w.Group] {
			return nil, fmt.Errorf("metadata: group %q: %w", w.Group, ErrGroupMissing)
		}
		ops = append(ops, putJSON(key, o.Offset))
	}
	for _, o := range w.TxnOffsets {
		switch {
		case strings.Contains(o.Topic, "/"):
			return nil, fmt.Errorf("metadata: group %q: topic name %q holds a '/'", w.Group, o.Topic)
		case o.ProducerID < 0:
			return nil, fmt.Errorf("metadata: group %q: producer id %d", w.Group, o.ProducerID)
		}
		key := txnOffsetKey(w.Group, o.ProducerID, o.GroupPartition)
		if o.Offset == nil {
			ops = append(ops, Delete(key))
			continue
		}
		if !exists[w.Group] {
			return nil, fmt.Errorf("metadata: group %q: %w", w.Group, ErrGroupMissing)
		}
		ops = append(ops, putJSON(key, o.Offset))
	}
	return ops, nil
}
