package metadata

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The answer of an epoch lookup that has none (Kafka's UNDEFINED_EPOCH and
// UNDEFINED_EPOCH_OFFSET).
const (
	UndefinedEpoch       int32 = -1
	UndefinedEpochOffset int64 = -1
)

// ErrEpochStart is returned by BumpLeaderEpoch for a start offset below the
// partition's log start offset.
var ErrEpochStart = errors.New("metadata: leader epoch would start below the log start offset")

// EpochEntry says where one leader epoch of a partition starts: the offset
// the first record appended in that epoch gets (an entry of Kafka's
// leader-epoch cache).
type EpochEntry struct {
	Epoch       int32 `json:"epoch"`
	StartOffset int64 `json:"start_offset"`
}

// LeaderEpochs is a partition's leader-epoch history, oldest first, epochs
// and start offsets both increasing; the last entry is the current epoch.
// A partition whose history was never written has the initial one: epoch 0
// from offset 0.
type LeaderEpochs struct {
	Entries []EpochEntry `json:"entries"`
	Version int64        `json:"-"` // KV version this was read at; 0: never written
}

// InitialLeaderEpochs is the history of a partition that never changed
// leader.
func InitialLeaderEpochs() LeaderEpochs {
	return LeaderEpochs{Entries: []EpochEntry{{Epoch: 0, StartOffset: 0}}}
}

// Current returns the current epoch's entry.
func (h LeaderEpochs) Current() EpochEntry {
	if len(h.Entries) == 0 {
		return EpochEntry{Epoch: UndefinedEpoch, StartOffset: UndefinedEpochOffset}
	}
	return h.Entries[len(h.Entries)-1]
}

// TruncateFromStart returns the history as seen from a log that starts at
// logStart: entries that start at or below it are dropped except the last
// of them, which now starts at logStart (Kafka's truncateFromStart). The
// receiver is not modified.
func (h LeaderEpochs) TruncateFromStart(logStart int64) LeaderEpochs {
	n := 0
	for n < len(h.Entries) && h.Entries[n].StartOffset <= logStart {
		n++
	}
	if n == 0 || (n == 1 && h.Entries[0].StartOffset == logStart) {
		return h
	}
	out := LeaderEpochs{Version: h.Version, Entries: make([]EpochEntry, 0, len(h.Entries)-n+1)}
	out.Entries = append(out.Entries, EpochEntry{Epoch: h.Entries[n-1].Epoch, StartOffset: logStart})
	out.Entries = append(out.Entries, h.Entries[n:]...)
	return out
}

// EndOffsetFor answers OffsetForLeaderEpoch from this history as Kafka's
// LeaderEpochFileCache.endOffsetFor does. For the current epoch: the log end
// offset. For an older epoch: the largest epoch at or below it, ending where
// the next higher epoch starts. For an epoch below the first one: the
// requested epoch itself, ending where the first epoch starts (the records
// before it were removed). For an epoch above the current one, or -1:
// undefined (-1, -1).
func (h LeaderEpochs) EndOffsetFor(requested int32, logEnd int64) (epoch int32, endOffset int64) {
	if requested == UndefinedEpoch || len(h.Entries) == 0 {
		return UndefinedEpoch, UndefinedEpochOffset
	}
	if h.Current().Epoch == requested {
		return requested, logEnd
	}
	higher := -1 // index of the first entry above requested
	for i, e := range h.Entries {
		if e.Epoch > requested {
			higher = i
			break
		}
	}
	switch {
	case higher < 0:
		return UndefinedEpoch, UndefinedEpochOffset
	case higher == 0:
		return requested, h.Entries[0].StartOffset
	default:
		return h.Entries[higher-1].Epoch, h.Entries[higher].StartOffset
	}
}

// EpochForOffset returns the epoch offset belongs to: that of the last entry
// starting at or below it; ok is false when offset is below every entry.
func (h LeaderEpochs) EpochForOffset(offset int64) (epoch int32, ok bool) {
	for _, e := range h.Entries {
		if e.StartOffset > offset {
			break
		}
		epoch, ok = e.Epoch, true
	}
	return epoch, ok
}

// bumped returns the history with a new epoch, one above every epoch before,
// starting at start. Entries starting at or after start are dropped, as
// Kafka's cache drops entries a new epoch would make non-monotonic: they
// were epochs in which nothing was appended that the log kept.
func (h LeaderEpochs) bumped(start, logStart int64) LeaderEpochs {
	next := int32(0)
	for _, e := range h.Entries {
		next = max(next, e.Epoch+1)
	}
	n := len(h.Entries)
	for n > 0 && h.Entries[n-1].StartOffset >= start {
		n--
	}
	out := LeaderEpochs{Version: h.Version, Entries: append(h.Entries[:n:n], EpochEntry{Epoch: next, StartOffset: start})}
	return out.TruncateFromStart(logStart)
}

func epochPrefix(id TopicID) string { return "epochs/" + id.String() + "/" }

func epochKey(id TopicID, p int32) string { return fmt.Sprintf("%s%010d", epochPrefix(id), p) }

// LeaderEpochs returns one partition's leader-epoch history (the initial
// one, version 0, when it was never written).
func (s *Store) LeaderEpochs(ctx context.Context, id TopicID, p int32) (LeaderEpochs, error) {
	var h LeaderEpochs
	v, ok, err := s.getJSON(ctx, epochKey(id, p), &h)
	if err != nil {
		return LeaderEpochs{}, fmt.Errorf("metadata: leader epochs %s/%d: %w", id, p, err)
	}
	if !ok || len(h.Entries) == 0 {
		return InitialLeaderEpochs(), nil
	}
	h.Version = v
	return h, nil
}

// TopicLeaderEpochs returns the written leader-epoch histories of a topic's
// partitions, by partition; a partition missing from the map has the
// initial history.
func (s *Store) TopicLeaderEpochs(ctx context.Context, id TopicID) (map[int32]LeaderEpochs, error) {
	items, err := s.kv.Range(ctx, epochPrefix(id), PrefixEnd(epochPrefix(id)), 0, false)
	if err != nil {
		return nil, fmt.Errorf("metadata: leader epochs of topic %s: %w", id, err)
	}
	out := make(map[int32]LeaderEpochs, len(items))
	for _, it := range items {
		p, err := strconv.ParseInt(strings.TrimPrefix(it.Key, epochPrefix(id)), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("metadata: leader epochs key %q: %w", it.Key, err)
		}
		var h LeaderEpochs
		if err := jsonDecode(it, &h); err != nil {
			return nil, err
		}
		if len(h.Entries) > 0 {
			h.Version = it.Version
			out[int32(p)] = h
		}
	}
	return out, nil
}

// BumpLeaderEpoch starts a partition's next leader epoch at start, the
// offset the new leader's first append gets (its log end offset), and
// returns the new history. Every change of a partition's owner calls it:
// the epoch then fences clients and consumers that still talk to the old
// one, and OffsetForLeaderEpoch answers for the older epochs from the
// recorded start offsets. Entries below the log start offset are dropped
// (TruncateFromStart). The write is a compare-and-swap on the history's
// version and on the partition's state, so it fails with ErrUnknownTopic
// once the partition is deleted.
func (s *Store) BumpLeaderEpoch(ctx context.Context, id TopicID, p int32, start int64) (LeaderEpochs, error) {
	for range maxCASRetries {
		st, ok, err := s.PartitionState(ctx, id, p)
		if err != nil {
			return LeaderEpochs{}, err
		}
		if !ok {
			return LeaderEpochs{}, fmt.Errorf("metadata: bump leader epoch %s/%d: %w", id, p, ErrUnknownTopic)
		}
		if start < st.LogStartOffset {
			return LeaderEpochs{}, fmt.Errorf("%w: %s/%d at %d, log start %d", ErrEpochStart, id, p, start, st.LogStartOffset)
		}
		h, err := s.LeaderEpochs(ctx, id, p)
		if err != nil {
			return LeaderEpochs{}, err
		}
		next := h.bumped(start, st.LogStartOffset)
		conds := []Cond{{Key: partKey(id, p), Version: st.Version}, {Key: epochKey(id, p), Version: h.Version}}
		rev, err := s.kv.Txn(ctx, conds, []Op{putJSON(epochKey(id, p), next)})
		if err == nil {
			next.Version = rev
			return next, nil
		}
		if !IsConflict(err) {
			return LeaderEpochs{}, fmt.Errorf("metadata: bump leader epoch %s/%d: %w", id, p, err)
		}
	}
	return LeaderEpochs{}, fmt.Errorf("metadata: bump leader epoch %s/%d: %w", id, p, ErrTooManyRetries)
}
