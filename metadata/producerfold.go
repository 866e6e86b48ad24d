package metadata

import (
	"context"
	"fmt"
	"strings"
)

// FoldProducers folds a partition's oldest producer deltas (at most
// foldMaxDeltas values, and nothing unless at least minDeltas wait) into a
// new snapshot generation, leaving out producers idle since before
// expireBeforeMs and aborted transactions that ended before the log start
// offset (retention removed their records), and returns how many delta
// values it folded.
//
// A snapshot may be larger than one transaction can carry (etcd bounds a
// request to 1.5 MiB), so the new generation's chunks are written first,
// each in its own transaction, and one last transaction switches the head
// to them and deletes the folded deltas and the old generation, conditional
// on the head and on every folded delta being unchanged. A fold that fails
// before the switch leaves only unreferenced chunks of the next
// generation, which the next fold clears before writing it again.
//
// Every write of a fold carries the fence, when given: a broker that lost
// the partition must not clear or write the chunks of the generation the
// new owner may be writing. A failed fence is a *NotOwnerError.
func (s *Store) FoldProducers(ctx context.Context, id TopicID, p int32, minDeltas int, expireBeforeMs int64, fence ...Cond) (int, error) {
	deltas, err := s.foldableDeltas(ctx, id, p)
	if err != nil || len(deltas) == 0 || len(deltas) < minDeltas {
		return 0, err
	}
	m := map[int64]*ProducerState{}
	head, hv, err := s.loadProducerSnapshot(ctx, id, p, m)
	if err != nil {
		return 0, err
	}
	if err := mergeItems(m, deltas); err != nil {
		return 0, err
	}
	st, _, err := s.PartitionState(ctx, id, p)
	if err != nil {
		return 0, err
	}
	pruneAborted(m, st.LogStartOffset)
	next := head.Gen + 1
	chunks, err := s.writeSnapshotChunks(ctx, id, p, next, sortedProducers(m, expireBeforeMs), fence)
	if err != nil {
		return 0, err
	}
	conds := []Cond{{Key: producerHeadKey(id, p), Version: hv}}
	ops := []Op{putJSON(producerHeadKey(id, p), producerHead{Gen: next, Chunks: chunks})}
	if hv != 0 {
		ops = append(ops, DeletePrefix(producerSnapPrefix(id, p, head.Gen)))
	}
	for _, it := range deltas {
		conds = append(conds, Cond{Key: it.Key, Version: it.Version})
		ops = append(ops, Delete(it.Key))
	}
	if _, err := s.kv.Txn(ctx, fenced(conds, fence), ops); err != nil {
		if IsConflict(err) { // surely not applied: the new chunks are unreferenced
			if nerr := s.checkFence(ctx, id, p, fence); nerr != nil {
				return 0, nerr
			}
			_, _ = s.kv.Txn(ctx, fence, []Op{DeletePrefix(producerSnapPrefix(id, p, next))})
		}
		return 0, fmt.Errorf("metadata: fold producers of %s/%d: %w", id, p, err)
	}
	return len(deltas), nil
}

// foldableDeltas returns the oldest delta values, whole deltas only (every
// chunk of a base offset or none).
func (s *Store) foldableDeltas(ctx context.Context, id TopicID, p int32) ([]Item, error) {
	prefix := producerDeltaPrefix(id, p)
	items, err := s.kv.Range(ctx, prefix, PrefixEnd(prefix), foldMaxDeltas+1, false)
	if err != nil || len(items) <= foldMaxDeltas {
		return items, err
	}
	cut := foldMaxDeltas
	base := deltaBase(items[cut].Key)
	for cut > 0 && deltaBase(items[cut-1].Key) == base {
		cut--
	}
	return items[:cut], nil
}

// deltaBase is the base-offset part of a delta key.
func deltaBase(key string) string {
	return key[:strings.LastIndexByte(key, '/')]
}

// writeSnapshotChunks writes list as generation gen and returns its chunk
// count. It first clears whatever an interrupted fold left of gen.
func (s *Store) writeSnapshotChunks(ctx context.Context, id TopicID, p int32, gen int64, list []ProducerState, fence []Cond) (int, error) {
	if _, err := s.kv.Txn(ctx, fence, []Op{DeletePrefix(producerSnapPrefix(id, p, gen))}); err != nil {
		return 0, s.foldWriteErr(ctx, id, p, fence, fmt.Errorf("metadata: clear producer snapshot %d of %s/%d: %w", gen, id, p, err))
	}
	chunks := chunkProducers(list, maxProducerValue)
	for i, c := range chunks {
		key := producerSnapKey(id, p, gen, i)
		if _, err := s.kv.Txn(ctx, fenced([]Cond{{Key: key, Version: 0}}, fence), []Op{Put(key, c)}); err != nil {
			return 0, s.foldWriteErr(ctx, id, p, fence, fmt.Errorf("metadata: write producer snapshot %s: %w", key, err))
		}
	}
	return len(chunks), nil
}

// foldWriteErr returns a *NotOwnerError for a lost compare-and-swap whose
// fence failed, else err.
func (s *Store) foldWriteErr(ctx context.Context, id TopicID, p int32, fence []Cond, err error) error {
	if IsConflict(err) {
		if nerr := s.checkFence(ctx, id, p, fence); nerr != nil {
			return nerr
		}
	}
	return err
}
