package metadata

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Folding bounds a partition's index keys without reading any data: the
// partition's owner writes a manifest object listing a run of old entries
// (their Segments, unchanged) to the bucket, then replaces the run's keys
// by one manifest entry in a single transaction. The data objects keep
// their references: the manifest now holds them, and whoever removes the
// manifest entry (retention, compaction) releases them with it (Folded).
// The manifest object gets a reference record of its own, so an
// uncommitted one is an orphan for the sweep and a committed one is known.

// ErrBadFold is returned by FoldSegments for a run that cannot be folded.
var ErrBadFold = errors.New("metadata: bad fold")

// FoldSegments replaces run, consecutive entries of one partition read
// from the index (none of them a manifest), by entry, a manifest entry of
// the same partition that covers exactly their offsets. It fails with
// ErrConflict when any of run changed since it was read (retention or
// compaction got there first); the caller then discards the manifest. A
// fence that no longer holds fails it with a *NotOwnerError, and a
// manifest the orphan sweep claimed with ErrObjectSwept.
//
// A transaction without a definite answer is settled by reading back
// entry's key, never by retrying: applied is success; not applied returns
// the error wrapped, and the manifest is an orphan.
func (s *Store) FoldSegments(ctx context.Context, run []Segment, entry Segment, fence ...Cond) error {
	if err := checkFold(run, entry); err != nil {
		return err
	}
	conds, ops := foldTxn(run, entry)
	_, err := s.kv.Txn(ctx, fenced(conds, fence), ops)
	switch {
	case err == nil:
		return nil
	case IsConflict(err):
		if nerr := s.checkFence(ctx, entry.Topic, entry.Partition, fence); nerr != nil {
			return nerr
		}
		if serr := s.sweptErr(ctx, entry.Object); serr != nil {
			return serr
		}
		return err
	}
	applied, rerr := s.foldApplied(ctx, entry)
	if rerr == nil && applied {
		return nil // it applied; only the answer was lost
	}
	return fmt.Errorf("metadata: fold %s/%d [%d,%d): %w", entry.Topic, entry.Partition, entry.BaseOffset, entry.EndOffset, err)
}

// foldTxn is the fold's transaction: every folded key unchanged, the
// manifest new and not swept; the keys deleted, the entry and the
// manifest's reference record written (a put after the delete of the
// first key wins).
func foldTxn(run []Segment, entry Segment) ([]Cond, []Op) {
	conds := make([]Cond, 0, len(run)+2)
	ops := make([]Op, 0, len(run)+2)
	for _, seg := range run {
		key := indexKey(seg.Topic, seg.Partition, seg.BaseOffset)
		conds = append(conds, Cond{Key: key, Version: seg.Version})
		ops = append(ops, Delete(key))
	}
	conds = append(conds, newObjectConds(entry.Object)...)
	ops = append(ops, putJSON(indexKey(entry.Topic, entry.Partition, entry.BaseOffset), entry),
		putJSON(objectRecordKey(entry.Object), ObjectRecord{Refs: 1, CreatedMs: time.Now().UnixMilli()}))
	return conds, ops
}

// foldApplied reports whether the index holds entry (a fold whose answer
// was lost applied).
func (s *Store) foldApplied(ctx context.Context, entry Segment) (bool, error) {
	var got Segment
	_, ok, err := s.getJSON(ctx, indexKey(entry.Topic, entry.Partition, entry.BaseOffset), &got)
	if err != nil || !ok {
		return false, err
	}
	return got.Manifest && got.Object == entry.Object, nil
}

// checkFold checks that run is consecutive, of one partition, holds no
// manifest, and that entry is a manifest entry covering it.
func checkFold(run []Segment, entry Segment) error {
	if len(run) < 2 {
		return fmt.Errorf("%w: a run of %d entries", ErrBadFold, len(run))
	}
	var size int64
	maxTS := run[0].MaxTimestamp
	for i, seg := range run {
		switch {
		case seg.Manifest:
			return fmt.Errorf("%w: entry at %d is a manifest", ErrBadFold, seg.BaseOffset)
		case seg.Topic != entry.Topic || seg.Partition != entry.Partition:
			return fmt.Errorf("%w: entry at %d is of another partition", ErrBadFold, seg.BaseOffset)
		case i > 0 && seg.BaseOffset != run[i-1].EndOffset:
			return fmt.Errorf("%w: gap or overlap at offset %d", ErrBadFold, seg.BaseOffset)
		}
		size += seg.Len
		maxTS = max(maxTS, seg.MaxTimestamp)
	}
	if !entry.Manifest || entry.Entries != len(run) || entry.BaseOffset != run[0].BaseOffset || entry.EndOffset != run[len(run)-1].EndOffset ||
		entry.Len != size || entry.MaxTimestamp != maxTS {
		return fmt.Errorf("%w: entry [%d,%d) does not sum up run [%d,%d)", ErrBadFold,
			entry.BaseOffset, entry.EndOffset, run[0].BaseOffset, run[len(run)-1].EndOffset)
	}
	return nil
}

// ManifestEntry returns the manifest entry that folds run into the
// manifest object obj.
func ManifestEntry(run []Segment, obj string) Segment {
	e := Segment{Topic: run[0].Topic, Partition: run[0].Partition, BaseOffset: run[0].BaseOffset,
		EndOffset: run[len(run)-1].EndOffset, Object: obj, Manifest: true, Entries: len(run),
		MaxTimestamp: run[0].MaxTimestamp}
	for _, seg := range run {
		e.Len += seg.Len
		e.MaxTimestamp = max(e.MaxTimestamp, seg.MaxTimestamp)
	}
	return e
}

// ManifestReader returns the entries a manifest entry's object lists (the
// storage layer reads and checks it in the bucket; metadata never reads
// objects).
type ManifestReader func(ctx context.Context, entry Segment) ([]Segment, error)

// manifestReader holds the Store's ManifestReader.
type manifestReader struct {
	fn atomic.Pointer[ManifestReader]
}

// SetManifestReader gives the Store the reader it needs to release the
// references a manifest entry holds when a caller removes one without its
// Folded list (a deleted topic's index, retention). Without one, removing
// such an entry fails.
func (s *Store) SetManifestReader(r ManifestReader) { s.manifests.fn.Store(&r) }

// withFolded returns segs with every manifest entry's Folded list filled
// in (a copy when any is).
func (s *Store) withFolded(ctx context.Context, segs []Segment) ([]Segment, error) {
	var out []Segment
	for i, seg := range segs {
		if !seg.Manifest || len(seg.Folded) > 0 {
			continue
		}
		fn := s.manifests.fn.Load()
		if fn == nil {
			return nil, fmt.Errorf("metadata: manifest entry [%d,%d) of %s/%d: no manifest reader",
				seg.BaseOffset, seg.EndOffset, seg.Topic, seg.Partition)
		}
		folded, err := (*fn)(ctx, seg)
		if err != nil {
			return nil, fmt.Errorf("metadata: read manifest %s: %w", seg.Object, err)
		}
		if out == nil {
			out = append([]Segment(nil), segs...)
		}
		out[i].Folded = folded
	}
	if out == nil {
		return segs, nil
	}
	return out, nil
}

// releaseDelta adds to delta the references that removing segs releases:
// one of each entry's object, and for a manifest entry one of every
// folded entry's object too. A manifest entry without its Folded list
// fails: releasing it alone would leak its data objects' references.
func releaseDelta(delta map[string]int, segs []Segment) error {
	for _, seg := range segs {
		delta[seg.Object]--
		if !seg.Manifest {
			continue
		}
		if len(seg.Folded) == 0 {
			return fmt.Errorf("metadata: manifest entry [%d,%d) of %s/%d removed without its folded entries",
				seg.BaseOffset, seg.EndOffset, seg.Topic, seg.Partition)
		}
		for _, f := range seg.Folded {
			delta[f.Object]--
		}
	}
	return nil
}

// ReleaseWeight is how many reference records removing seg touches: its
// object's, and for a manifest entry those of the entries it folds.
func ReleaseWeight(seg Segment) int { return 1 + max(seg.Entries, len(seg.Folded)) }
