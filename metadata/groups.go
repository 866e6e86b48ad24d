package metadata

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// ClaimGroups makes the caller the owner of every consumer group and
// returns the fence version that its WriteGroups calls must present. A
// coordinator that claims after it fences the earlier one out: the earlier
// one's writes fail with ErrConflict from then on.
func (s *Store) ClaimGroups(ctx context.Context, nodeID int32) (int64, error) {
	owner := map[string]int64{"node_id": int64(nodeID), "claimed_ms": time.Now().UnixMilli()}
	for range maxCASRetries {
		it, _, err := s.kv.Get(ctx, groupOwnerKey)
		if err != nil {
			return 0, err
		}
		rev, err := s.kv.Txn(ctx, []Cond{{Key: groupOwnerKey, Version: it.Version}}, []Op{putJSON(groupOwnerKey, owner)})
		if err == nil {
			return rev, nil
		}
		if !IsConflict(err) {
			return 0, fmt.Errorf("metadata: claim groups: %w", err)
		}
	}
	return 0, fmt.Errorf("metadata: claim groups: %w", ErrTooManyRetries)
}

// LoadGroups returns every stored group with its offsets, sorted by id.
// Offsets whose group has no record (which WriteGroups never leaves behind)
// are ignored.
func (s *Store) LoadGroups(ctx context.Context) ([]StoredGroup, error) {
	items, err := s.kv.Range(ctx, "groups/", PrefixEnd("groups/"), 0, false)
	if err != nil {
		return nil, err
	}
	out := make([]StoredGroup, 0, len(items))
	byID := make(map[string]*StoredGroup, len(items))
	for _, it := range items {
		id, err := url.PathUnescape(strings.TrimPrefix(it.Key, "groups/"))
		if err != nil {
			return nil, fmt.Errorf("metadata: group key %q: %w", it.Key, err)
		}
		g := StoredGroup{ID: id, Version: it.Version, Offsets: map[GroupPartition]CommittedOffset{}}
		if err := jsonDecode(it, &g.Record); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	for i := range out {
		byID[out[i].ID] = &out[i]
	}
	return out, s.loadOffsets(ctx, byID)
}

func (s *Store) loadOffsets(ctx context.Context, groups map[string]*StoredGroup) error {
	items, err := s.kv.Range(ctx, "offsets/", PrefixEnd("offsets/"), 0, false)
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

// GroupVersion returns the KV version of a group's record (0: none).
func (s *Store) GroupVersion(ctx context.Context, group string) (int64, error) {
	it, _, err := s.kv.Get(ctx, groupKey(group))
	return it.Version, err
}

// WriteGroups applies writes in one transaction, in order, if the owner
// fence is still at fence and every group touched is still at the version
// given in versions (absent: the group has no record). Many groups' commits
// of many partitions thus cost one transaction. It returns the revision
// written, which is the new version of every record it put.
func (s *Store) WriteGroups(ctx context.Context, fence int64, versions map[string]int64, writes []GroupWrite) (int64, error) {
	conds := []Cond{{Key: groupOwnerKey, Version: fence}}
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

// groupWriteOps turns one write into ops, tracking in exists whether the
// group's record exists at this point of the transaction.
func groupWriteOps(w GroupWrite, exists map[string]bool) ([]Op, error) {
	var ops []Op
	if w.Delete {
		ops = append(ops, Delete(groupKey(w.Group)), DeletePrefix(groupOffsetsPrefix(w.Group)))
		exists[w.Group] = false
	}
	if w.Record != nil {
		ops = append(ops, putJSON(groupKey(w.Group), w.Record))
		exists[w.Group] = true
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
	return ops, nil
}
