package metadata

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// In a cluster every partition and every group-coordinator shard has one
// owner: the broker whose own key it is, written on that broker's session
// lease. The key's version when the owner wrote it is the fence: every
// durable write the owner makes about the partition (or shard) carries
// Cond{Key: own key, Version: that version}, so that a broker whose lease
// ended (the key is gone) or whose key was taken over (a new version)
// never commits again.

// OwnerPrefix holds every partition's own key; ShardOwnerPrefix every
// shard's.
const (
	OwnerPrefix      = "own/parts/"
	ShardOwnerPrefix = "own/shards/"
)

// OwnerKey is the own key of partition p of topic id.
func OwnerKey(id TopicID, p int32) string { return fmt.Sprintf("%s%s/%010d", OwnerPrefix, id, p) }

// ShardOwnerKey is the own key of a group-coordinator shard.
func ShardOwnerKey(shard int32) string { return fmt.Sprintf("%s%03d", ShardOwnerPrefix, shard) }

// ParseOwnerKey is the inverse of OwnerKey; ok is false for any other key.
func ParseOwnerKey(key string) (id TopicID, p int32, ok bool) {
	rest, found := strings.CutPrefix(key, OwnerPrefix)
	hexID, num, found2 := strings.Cut(rest, "/")
	n, err := strconv.ParseInt(num, 10, 32)
	if !found || !found2 || err != nil || id.UnmarshalText([]byte(hexID)) != nil {
		return TopicID{}, 0, false
	}
	return id, int32(n), true
}

// ParseShardOwnerKey is the inverse of ShardOwnerKey.
func ParseShardOwnerKey(key string) (shard int32, ok bool) {
	num, found := strings.CutPrefix(key, ShardOwnerPrefix)
	n, err := strconv.ParseInt(num, 10, 32)
	return int32(n), found && err == nil
}

// OwnerRecord is the value of an own key. Epoch is the partition's leader
// epoch that began with this owner (0 for a shard). Lease is the etcd
// lease the key lives on: it tells one session's write from another's of
// the same node when an unknown outcome is read back.
type OwnerRecord struct {
	NodeID int32 `json:"node_id"`
	Epoch  int32 `json:"epoch,omitempty"`
	Lease  int64 `json:"lease"`
}

// DecodeOwner decodes an own key's value.
func DecodeOwner(it Item) (OwnerRecord, error) {
	var r OwnerRecord
	if err := json.Unmarshal(it.Value, &r); err != nil {
		return OwnerRecord{}, fmt.Errorf("metadata: decode %s: %w", it.Key, err)
	}
	return r, nil
}

// AcquirePartition is AcquirePartitionKeeping with no kept batch.
func (s *Store) AcquirePartition(ctx context.Context, id TopicID, p int32, node int32, lease int64) (fence Cond, epoch int32, err error) {
	return s.AcquirePartitionKeeping(ctx, id, p, node, lease, KeptBatches{})
}

// AcquirePartitionKeeping makes node the owner of partition p on lease
// and, in the same transaction, starts the partition's next leader epoch
// where node's first new append goes: at the end of the batches node
// kept from an earlier ownership when they continue the log (see
// KeptBatches), else at the committed next offset, because the new owner
// then rebuilds its state from metadata alone and drops what it kept. It
// returns the fence and the new epoch. The transaction's conditions are
// the own key absent and the partition's state and epoch history at the
// versions read, so it fails with ErrConflict while another broker owns
// the partition, and ErrUnknownTopic when the partition does not exist;
// and the decision about the kept batches is made on exactly the state
// it commits against. An unknown outcome is settled by reading the own
// key back. A request still in flight may apply after a read back that
// found the key absent; the key then names this node and lease without
// the caller knowing it, and the caller (the cluster package) deletes
// such a stray key at its version.
func (s *Store) AcquirePartitionKeeping(ctx context.Context, id TopicID, p int32, node int32, lease int64, kept KeptBatches) (fence Cond, epoch int32, err error) {
	key := OwnerKey(id, p)
	for range maxCASRetries {
		st, ok, err := s.PartitionState(ctx, id, p)
		if err != nil {
			return Cond{}, 0, fmt.Errorf("metadata: acquire %s/%d: %w", id, p, err)
		}
		if !ok {
			return Cond{}, 0, fmt.Errorf("metadata: acquire %s/%d: %w", id, p, ErrUnknownTopic)
		}
		h, err := s.LeaderEpochs(ctx, id, p)
		if err != nil {
			return Cond{}, 0, err
		}
		next := h.bumped(kept.epochStart(h, st.NextOffset), st.LogStartOffset)
		rec := OwnerRecord{NodeID: node, Epoch: next.Current().Epoch, Lease: lease}
		own := putJSON(key, rec)
		own.Lease = lease
		conds := []Cond{{Key: key}, {Key: partKey(id, p), Version: st.Version}, {Key: epochKey(id, p), Version: h.Version}}
		rev, err := s.kv.Txn(ctx, conds, []Op{putJSON(epochKey(id, p), next), own})
		switch {
		case err == nil:
			return Cond{Key: key, Version: rev}, rec.Epoch, nil
		case IsUncertain(err), IsConflict(err):
			fence, held, serr := s.settleOwner(ctx, key, rec)
			if serr != nil {
				return Cond{}, 0, fmt.Errorf("metadata: acquire %s/%d: %w (reading back: %w)", id, p, err, serr)
			}
			if fence.Version != 0 {
				return fence, rec.Epoch, nil
			}
			if held != nil {
				return Cond{}, 0, fmt.Errorf("metadata: acquire %s/%d: owned by node %d: %w", id, p, held.NodeID, ErrConflict)
			}
			// Not applied and nobody owns it: the state or the epochs
			// moved (a commit, a bump); read them again.
		default:
			return Cond{}, 0, fmt.Errorf("metadata: acquire %s/%d: %w", id, p, err)
		}
	}
	return Cond{}, 0, fmt.Errorf("metadata: acquire %s/%d: %w", id, p, ErrTooManyRetries)
}

// settleOwner reads an own key back after a write of want whose outcome is
// unknown or that lost a compare. The write applied when the key holds
// exactly want (the epoch and the lease make it unique): then fence is its
// condition. Else held is the other owner's record, or nil when the key is
// absent.
func (s *Store) settleOwner(ctx context.Context, key string, want OwnerRecord) (fence Cond, held *OwnerRecord, err error) {
	it, ok, err := s.kv.Get(ctx, key)
	if err != nil || !ok {
		return Cond{}, nil, err
	}
	got, err := DecodeOwner(it)
	if err != nil {
		return Cond{}, nil, err
	}
	if got == want {
		return Cond{Key: key, Version: it.Version}, nil, nil
	}
	return Cond{}, &got, nil
}

// ReleasePartition deletes a partition's own key if it is still at the
// fence's version: the owner hands the partition over after its last
// commit. ErrConflict: the ownership was lost already.
func (s *Store) ReleasePartition(ctx context.Context, fence Cond) error {
	return s.releaseOwner(ctx, fence)
}

// AcquireShard makes node the owner of a group-coordinator shard on lease
// and returns the fence. ErrConflict while another broker owns it.
func (s *Store) AcquireShard(ctx context.Context, shard int32, node int32, lease int64) (Cond, error) {
	key := ShardOwnerKey(shard)
	rec := OwnerRecord{NodeID: node, Lease: lease}
	own := putJSON(key, rec)
	own.Lease = lease
	rev, err := s.kv.Txn(ctx, []Cond{{Key: key}}, []Op{own})
	if err == nil {
		return Cond{Key: key, Version: rev}, nil
	}
	if !IsUncertain(err) && !IsConflict(err) {
		return Cond{}, fmt.Errorf("metadata: acquire shard %d: %w", shard, err)
	}
	fence, held, serr := s.settleOwner(ctx, key, rec)
	switch {
	case serr != nil:
		return Cond{}, fmt.Errorf("metadata: acquire shard %d: %w (reading back: %w)", shard, err, serr)
	case fence.Version != 0:
		return fence, nil
	case held != nil:
		return Cond{}, fmt.Errorf("metadata: acquire shard %d: owned by node %d: %w", shard, held.NodeID, ErrConflict)
	}
	// Absent: an unknown outcome that did not apply. The caller's next
	// pass tries again.
	return Cond{}, fmt.Errorf("metadata: acquire shard %d: not applied: %w", shard, err)
}

// ReleaseShard deletes a shard's own key if it is still at the fence's
// version. ErrConflict: the ownership was lost already.
func (s *Store) ReleaseShard(ctx context.Context, fence Cond) error {
	return s.releaseOwner(ctx, fence)
}

func (s *Store) releaseOwner(ctx context.Context, fence Cond) error {
	for range maxCASRetries {
		_, err := s.kv.Txn(ctx, []Cond{fence}, []Op{Delete(fence.Key)})
		if err == nil {
			return nil
		}
		if !IsUncertain(err) {
			return fmt.Errorf("metadata: release %s: %w", fence.Key, err)
		}
		it, ok, rerr := s.kv.Get(ctx, fence.Key)
		switch {
		case rerr != nil:
			return fmt.Errorf("metadata: release %s: %w (reading back: %w)", fence.Key, err, rerr)
		case !ok:
			return nil // deleted: by this write, or the lease ended; either way not ours
		case it.Version != fence.Version:
			return fmt.Errorf("metadata: release %s: %w", fence.Key, ErrConflict)
		}
		// Still ours at the fence: the delete did not apply; the
		// condition makes sending it again safe.
	}
	return fmt.Errorf("metadata: release %s: %w", fence.Key, ErrTooManyRetries)
}
