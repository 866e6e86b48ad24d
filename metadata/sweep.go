package metadata

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrObjectSwept is returned by a commit that would reference an object the
// orphan sweep has claimed: the object is deleted, or about to be. The
// caller uploads its data again under a new key; retrying the commit can
// never succeed.
var ErrObjectSwept = errors.New("metadata: object was claimed by the orphan sweep")

// An orphan is an object in the store that metadata has no record of (no
// objects/ or garbage/ key): its PUT landed but its commit did not. The
// sweep may only delete one after claiming it, by writing a tombstone
// (swept/KEY) in a transaction that requires both records to be absent.
// Every commit that creates an object's reference record requires the
// tombstone to be absent in the same transaction. Claim and commit are
// therefore ordered by the KV: either the commit lands first and the claim
// loses its compare-and-swap (the object is kept), or the claim lands first
// and the commit fails with ErrObjectSwept (the object is never
// referenced). Neither side relies on clocks for this; the sweep's grace
// period only keeps it from racing young uploads at all.
//
// The tombstone outlives the deletion by tombstoneLife, so a commit of the
// same key stays refused for that long. An uploader gives up committing an
// object long before that (it re-uploads on a failed cycle).

// tombstoneLife is how long a claimed orphan's tombstone is kept.
const tombstoneLife = 7 * 24 * time.Hour

func sweptKey(obj string) string { return "swept/" + obj }

// tombstone records an object claimed by the orphan sweep.
type tombstone struct {
	ForgetAfterMs int64 `json:"forget_after_ms"`
}

// newObjectConds are the conditions of every transaction that creates an
// object's reference record: no record yet, and not claimed by the sweep.
func newObjectConds(obj string) []Cond {
	return []Cond{{Key: objectRecordKey(obj), Version: 0}, {Key: sweptKey(obj), Version: 0}}
}

// sweptErr returns ErrObjectSwept (wrapped) when obj has a tombstone; a
// commit that lost a compare-and-swap calls it to tell a claimed object
// from an ordinary conflict.
func (s *Store) sweptErr(ctx context.Context, obj string) error {
	_, ok, err := s.kv.Get(ctx, sweptKey(obj))
	if err != nil {
		return err
	}
	if ok {
		return fmt.Errorf("metadata: object %s: %w", obj, ErrObjectSwept)
	}
	return nil
}

// UnknownObjects returns the keys among objs, which must be sorted
// ascending, that metadata has neither a reference nor a garbage record
// for. It reads each record family once over the span of objs instead of
// once per key, so a page of a store listing costs two range reads however
// many of its objects are live.
func (s *Store) UnknownObjects(ctx context.Context, objs []string) ([]string, error) {
	if len(objs) == 0 {
		return nil, nil
	}
	known := map[string]bool{}
	for _, prefix := range []string{"objects/", "garbage/"} {
		items, err := s.kv.Range(ctx, prefix+objs[0], prefix+objs[len(objs)-1]+"\x00", 0, false)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			known[it.Key[len(prefix):]] = true
		}
	}
	var unknown []string
	for _, obj := range objs {
		if !known[obj] {
			unknown = append(unknown, obj)
		}
	}
	return unknown, nil
}

// ClaimOrphan claims obj for deletion by the orphan sweep (see above). It
// reports false when metadata knows the object meanwhile (a commit won the
// race): the object must be kept. A claim made by an earlier pass whose
// delete did not finish counts as claimed.
func (s *Store) ClaimOrphan(ctx context.Context, obj string) (bool, error) {
	conds := append(newObjectConds(obj), Cond{Key: garbageRecordKey(obj), Version: 0})
	ts := tombstone{ForgetAfterMs: time.Now().Add(tombstoneLife).UnixMilli()}
	_, err := s.kv.Txn(ctx, conds, []Op{putJSON(sweptKey(obj), ts)})
	if err == nil {
		return true, nil
	}
	if !IsConflict(err) {
		return false, err
	}
	if err := s.sweptErr(ctx, obj); errors.Is(err, ErrObjectSwept) {
		return true, nil
	} else if err != nil {
		return false, err
	}
	return false, nil
}

// ForgetTombstones deletes up to limit expired tombstones with keys after
// the object key after, and returns the last object key it looked at ("":
// the end of the tombstones, start again).
func (s *Store) ForgetTombstones(ctx context.Context, after string, limit int) (string, error) {
	start := sweptKey(after) + "\x00"
	if after == "" {
		start = sweptKey("")
	}
	items, err := s.kv.Range(ctx, start, PrefixEnd(sweptKey("")), limit, false)
	if err != nil {
		return after, err
	}
	now := time.Now().UnixMilli()
	for _, it := range items {
		var ts tombstone
		if err := jsonDecode(it, &ts); err != nil {
			return after, err
		}
		if ts.ForgetAfterMs > now {
			continue
		}
		_, err := s.kv.Txn(ctx, []Cond{{Key: it.Key, Version: it.Version}}, []Op{Delete(it.Key)})
		if err != nil && !IsConflict(err) {
			return after, err
		}
	}
	if len(items) < limit {
		return "", nil
	}
	return items[len(items)-1].Key[len(sweptKey("")):], nil
}

const orphanSweepKey = "lifecycle/orphan-sweep"

// SweepCursor is the orphan sweep's durable progress, so that a sweep that
// stops (at its per-pass bound, or with the broker) resumes where it was
// instead of starting over the listing.
type SweepCursor struct {
	// After is the last object key the sweep examined; "" starts the
	// listing over.
	After string `json:"after"`
	// TombstonesAfter is the same for the tombstone expiry.
	TombstonesAfter string `json:"tombstones_after"`
	// Version is the KV version the cursor was read at (0: never saved).
	Version int64 `json:"-"`
}

// OrphanSweepCursor returns the sweep's saved cursor (the zero cursor when
// none was ever saved).
func (s *Store) OrphanSweepCursor(ctx context.Context) (SweepCursor, error) {
	var c SweepCursor
	v, _, err := s.getJSON(ctx, orphanSweepKey, &c)
	c.Version = v
	return c, err
}

// SetOrphanSweepCursor saves c if the stored cursor is still at c.Version,
// else returns ErrConflict (another sweeper moved it). It returns c at its
// new version.
func (s *Store) SetOrphanSweepCursor(ctx context.Context, c SweepCursor) (SweepCursor, error) {
	rev, err := s.kv.Txn(ctx, []Cond{{Key: orphanSweepKey, Version: c.Version}}, []Op{putJSON(orphanSweepKey, c)})
	if err != nil {
		return c, err
	}
	c.Version = rev
	return c, nil
}
