package metadata

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// groupLayoutKey records that the group keys carry their shard: once it
// exists, MigrateGroupKeys costs one read.
const groupLayoutKey = "groupcoord/layout"

const groupLayoutSharded = "shards-64"

// Migration bounds: a transaction moves at most migrateBatch keys (two
// conditions and two writes each, inside etcd's default 128 operations)
// and about migrateBytes of values (inside its 1.5 MiB request).
const (
	migrateBatch = 50
	migrateBytes = 512 << 10
)

// MigrateGroupKeys moves the group records and offsets of the unsharded
// layout (groups/<group>, offsets/<group>/...) under their shard, in
// bounded transactions, and then records that the store is sharded. It is
// idempotent and resumes where a crash left it: each transaction moves
// keys still at the version read, and a key whose sharded twin exists
// already (written after a partial run) is only deleted. It returns how
// many keys it moved or deleted.
func (s *Store) MigrateGroupKeys(ctx context.Context) (int, error) {
	if _, ok, err := s.kv.Get(ctx, groupLayoutKey); err != nil || ok {
		return 0, err
	}
	moved := 0
	for _, prefix := range []string{"groups/", "offsets/"} {
		n, err := s.migrateRange(ctx, prefix)
		moved += n
		if err != nil {
			return moved, fmt.Errorf("metadata: migrate group keys under %s: %w", prefix, err)
		}
	}
	_, err := s.kv.Txn(ctx, []Cond{{Key: groupLayoutKey, Version: 0}}, []Op{Put(groupLayoutKey, []byte(groupLayoutSharded))})
	if err != nil && !IsConflict(err) { // a conflict: another broker finished first
		return moved, fmt.Errorf("metadata: mark group keys sharded: %w", err)
	}
	return moved, nil
}

// migrateRange moves the unsharded keys under prefix, a page at a time.
func (s *Store) migrateRange(ctx context.Context, prefix string) (int, error) {
	cursor, end, moved, conflicts := prefix, PrefixEnd(prefix), 0, 0
	for {
		items, err := s.kv.Range(ctx, cursor, end, migrateBatch, false)
		if err != nil || len(items) == 0 {
			return moved, err
		}
		conds, ops, last, err := s.migrateOps(ctx, items)
		if err != nil {
			return moved, err
		}
		if len(ops) > 0 {
			if _, err := s.kv.Txn(ctx, conds, ops); err != nil {
				// A conflict (another broker moved some) or an unknown
				// outcome: read the page again. The conditions make that
				// safe: a move that applied is not in the page any more.
				if !(IsConflict(err) || IsUncertain(err)) || conflicts >= maxCASRetries {
					return moved, err
				}
				conflicts++
				continue
			}
		}
		moved += len(conds) / 2
		cursor = last + "\x00"
	}
}

// migrateOps plans the moves of the unsharded keys among items, up to
// migrateBytes of values, and returns the last key it covered. Each move
// has two conditions: the old key at the version read, the new one as
// read.
func (s *Store) migrateOps(ctx context.Context, items []Item) ([]Cond, []Op, string, error) {
	var conds []Cond
	var ops []Op
	size, last := 0, ""
	for _, it := range items {
		if size > 0 && size+len(it.Value) > migrateBytes {
			break
		}
		last = it.Key
		to, ok, err := shardedKey(it.Key)
		if err != nil {
			return nil, nil, "", err
		}
		if !ok {
			continue
		}
		twin, exists, err := s.kv.Get(ctx, to)
		if err != nil {
			return nil, nil, "", err
		}
		conds = append(conds, Cond{Key: it.Key, Version: it.Version}, Cond{Key: to, Version: twin.Version})
		ops = append(ops, Delete(it.Key))
		if !exists { // else written in the sharded layout since: newer
			ops = append(ops, Put(to, it.Value))
			size += len(it.Value)
		}
	}
	return conds, ops, last, nil
}

// shardedKey returns the sharded form of an unsharded group or offset key;
// ok is false for a key that is sharded already.
func shardedKey(key string) (string, bool, error) {
	parts := strings.Split(key, "/")
	unsharded := (parts[0] == "groups" && len(parts) == 2) || (parts[0] == "offsets" && len(parts) == 4)
	if !unsharded {
		return "", false, nil
	}
	id, err := url.PathUnescape(parts[1])
	if err != nil {
		return "", false, fmt.Errorf("metadata: unsharded group key %q: %w", key, err)
	}
	parts = append(parts[:1], append([]string{shardSegment(GroupShard(id))}, parts[1:]...)...)
	return strings.Join(parts, "/"), true, nil
}
