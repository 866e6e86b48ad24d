package metadata

import (
	"context"
	"fmt"
	"math"
)

// Under wal durability a broker that loses a partition keeps the batches
// it acknowledged and never committed, and commits them when it owns the
// partition again. They carry the leader epoch they were appended in. The
// leader-epoch history decides, as it does for a Kafka replica that comes
// back, whether they still continue the partition's log:
//
//   - They do when the history says each of their epochs runs at least to
//     the end of the batches stamped with it (OffsetForLeaderEpoch would
//     answer no divergence for them). The acquirer's new epoch then starts
//     at their end: it is the new leader's log end offset, and the kept
//     batches keep the epoch they were served with. Re-stamping them with
//     the new epoch instead would make a consumer that read them under the
//     old one see its epoch end where the new one starts, below what it
//     read, and truncate and re-read.
//   - They do not once another broker has led the partition since (its
//     epoch starts at or below their start, so their epoch ends there):
//     like an old leader that truncates to the new leader's log, the
//     acquirer drops them. A forced takeover makes that so even before any
//     other broker acquires (TakeOverPartition).
//
// The decision is made in the transaction that writes the acquirer's own
// key, against the partition state and history it is conditioned on, and
// the kept batches then commit under that fence like any other: no commit
// can slip in between the decision and the fence.

// KeptBatches describes the batches an acquiring broker holds for a
// partition, not committed: offsets [Start, End), and the leader epochs
// stamped in them, each with the first offset stamped with it. The zero
// value is no kept batch.
type KeptBatches struct {
	Start, End int64
	Epochs     []EpochEntry
}

// Continues reports whether the kept batches continue the log whose
// committed next offset is committed and whose leader-epoch history is h.
func (k KeptBatches) Continues(h LeaderEpochs, committed int64) bool {
	if k.End <= k.Start || k.Start != committed || len(k.Epochs) == 0 || k.Epochs[0].StartOffset != k.Start {
		return false
	}
	for i, run := range k.Epochs {
		end := k.End
		if i+1 < len(k.Epochs) {
			end = k.Epochs[i+1].StartOffset
		}
		if end <= run.StartOffset {
			return false
		}
		if e, ok := h.EpochForOffset(run.StartOffset); !ok || e != run.Epoch {
			return false
		}
		if epoch, to := h.EndOffsetFor(run.Epoch, math.MaxInt64); epoch != run.Epoch || to < end {
			return false
		}
	}
	return true
}

// epochStart returns where an acquirer holding k starts its epoch: the
// end of k when k continues the log, else the committed next offset.
func (k KeptBatches) epochStart(h LeaderEpochs, committed int64) int64 {
	if k.Continues(h, committed) {
		return k.End
	}
	return committed
}

// TakeOverPartition starts a new leader epoch of partition p at its
// committed next offset while nobody owns it, and returns that offset:
// batches a gone owner kept in its WAL past it no longer continue the log,
// so the owner drops them should it come back (KeptBatches), and they are
// lost exactly from that offset on. The write's conditions are the own key
// absent, the partition's state and epochs at the versions read, and
// conds (the operator's: the gone broker still unregistered); it fails
// with ErrConflict when the partition is owned or a cond fails, and with
// ErrUnknownTopic when the partition does not exist. An unknown outcome is
// settled by reading the epochs back.
func (s *Store) TakeOverPartition(ctx context.Context, id TopicID, p int32, conds []Cond) (from int64, err error) {
	for range maxCASRetries {
		st, ok, err := s.PartitionState(ctx, id, p)
		if err != nil {
			return 0, fmt.Errorf("metadata: take over %s/%d: %w", id, p, err)
		}
		if !ok {
			return 0, fmt.Errorf("metadata: take over %s/%d: %w", id, p, ErrUnknownTopic)
		}
		h, err := s.LeaderEpochs(ctx, id, p)
		if err != nil {
			return 0, err
		}
		next := h.bumped(st.NextOffset, st.LogStartOffset)
		all := append([]Cond{{Key: OwnerKey(id, p)}, {Key: partKey(id, p), Version: st.Version},
			{Key: epochKey(id, p), Version: h.Version}}, conds...)
		_, err = s.kv.Txn(ctx, all, []Op{putJSON(epochKey(id, p), next)})
		switch {
		case err == nil:
			return st.NextOffset, nil
		case IsUncertain(err):
			if applied, rerr := s.epochsAre(ctx, id, p, next); rerr != nil {
				return 0, fmt.Errorf("metadata: take over %s/%d: %w (reading back: %w)", id, p, err, rerr)
			} else if applied {
				return st.NextOffset, nil
			}
		case IsConflict(err):
			why, cerr := s.blocked(ctx, append([]Cond{{Key: OwnerKey(id, p)}}, conds...))
			if cerr != nil {
				return 0, fmt.Errorf("metadata: take over %s/%d: %w (reading back: %w)", id, p, err, cerr)
			}
			if why != "" {
				return 0, fmt.Errorf("metadata: take over %s/%d: %s: %w", id, p, why, ErrConflict)
			}
			// Only the state or the epochs moved: read them again.
		default:
			return 0, fmt.Errorf("metadata: take over %s/%d: %w", id, p, err)
		}
	}
	return 0, fmt.Errorf("metadata: take over %s/%d: %w", id, p, ErrTooManyRetries)
}

// epochsAre reports whether the partition's history now ends with want's
// current entry: a bump whose outcome was unknown applied.
func (s *Store) epochsAre(ctx context.Context, id TopicID, p int32, want LeaderEpochs) (bool, error) {
	h, err := s.LeaderEpochs(ctx, id, p)
	if err != nil || h.Version == 0 {
		return false, err
	}
	return h.Current() == want.Current(), nil
}

// blocked names the first of conds that does not hold now ("" when all
// do). Only absence and exact versions are compared.
func (s *Store) blocked(ctx context.Context, conds []Cond) (string, error) {
	for _, c := range conds {
		it, ok, err := s.kv.Get(ctx, c.Key)
		if err != nil {
			return "", err
		}
		switch {
		case c.Version == 0 && ok:
			if _, _, own := ParseOwnerKey(c.Key); own {
				if r, derr := DecodeOwner(it); derr == nil {
					return fmt.Sprintf("owned by node %d", r.NodeID), nil
				}
			}
			return c.Key + " exists", nil
		case c.Version != 0 && (!ok || it.Version != c.Version):
			return c.Key + " changed", nil
		}
	}
	return "", nil
}
