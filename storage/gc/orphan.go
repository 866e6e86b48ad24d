package gc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/objectstore"
)

// The orphan sweep deletes objects under our prefixes that metadata never
// heard of: their PUT landed but the commit that would have referenced them
// did not (a crash between the two, or a commit that failed for good).
//
// Safety: an object is deleted only after metadata.ClaimOrphan wrote its
// tombstone, a compare-and-swap that fails once the object has a reference
// or garbage record; every commit that creates such a record fails once
// the tombstone exists. So an object an upload committed is never deleted,
// and an object deleted is never committed, whatever the timing of the
// upload. The grace period (Collector.Grace, against the store's modification
// time) stays: it keeps the sweep away from uploads that are simply in
// flight, which would otherwise lose their commit and upload again.
//
// Scale: the sweep walks the listing in key order, a page at a time; it
// checks a whole page against metadata in one read per record family and
// keeps only the unknown keys, so live objects cost a listing entry and
// nothing more. It examines at most Collector.SweepKeys keys per pass and
// saves its place in metadata after every page, so the next pass (on this
// broker or another) resumes there; at the end of the listing it starts
// over. A resumed pass lists from its cursor (the store's start-after), so
// the keys before it cost no request at all.

// orphanSweep is one pass of the sweep; whoever runs the pass owns it.
type orphanSweep struct {
	c      *Collector
	cutoff time.Time            // objects modified after it are left alone
	cur    metadata.SweepCursor // where the pass resumes, saved after each page
	budget int                  // keys the pass may still examine
	page   []objectstore.Info   // listed keys not yet checked
	lost   bool                 // another sweeper moved the cursor: stop
	errs   []error
}

// run walks the listing from the cursor until the budget runs out or the
// listing ends; at the end the cursor starts over.
func (sw *orphanSweep) run(ctx context.Context) error {
	for _, prefix := range sw.c.Prefixes { // in key order
		if sw.cur.After >= metadata.PrefixEnd(prefix) {
			continue // the cursor is past this prefix
		}
		err := sw.c.Store.List(ctx, prefix, sw.cur.After, sw.visit(ctx))
		if err == nil {
			sw.flush(ctx)
		}
		if err != nil || sw.stopped() {
			return errors.Join(append(sw.errs, err)...)
		}
	}
	sw.cur.After = ""
	return errors.Join(sw.errs...)
}

func (sw *orphanSweep) stopped() bool { return sw.lost || sw.budget <= 0 }

// visit returns the listing callback, which checks a page at a time (the
// listing starts after the cursor).
func (sw *orphanSweep) visit(ctx context.Context) func(objectstore.Info) bool {
	return func(info objectstore.Info) bool {
		sw.page = append(sw.page, info)
		sw.budget--
		if len(sw.page) >= sw.c.Page || sw.budget <= 0 {
			sw.flush(ctx)
		}
		return !sw.stopped() && ctx.Err() == nil
	}
}

// flush deletes the page's orphans and saves the cursor past the page.
func (sw *orphanSweep) flush(ctx context.Context) {
	if len(sw.page) == 0 || sw.lost {
		return
	}
	var old []string
	for _, info := range sw.page {
		if info.Modified.Before(sw.cutoff) {
			old = append(old, info.Key)
		}
	}
	last := sw.page[len(sw.page)-1].Key
	sw.page = sw.page[:0]
	unknown, err := sw.c.Meta.UnknownObjects(ctx, old)
	if err != nil {
		sw.errs = append(sw.errs, err)
		sw.budget = 0 // do not move the cursor past keys never checked
		return
	}
	for _, key := range unknown {
		if sw.c.InFlight(key) { // cut by this broker and not committed yet
			continue
		}
		sw.deleteOrphan(ctx, key)
	}
	sw.cur.After = last
	if err := sw.save(ctx); err != nil {
		sw.errs = append(sw.errs, err)
	}
}

// deleteOrphan claims key and deletes it; a key committed meanwhile is kept.
func (sw *orphanSweep) deleteOrphan(ctx context.Context, key string) {
	claimed, err := sw.c.Meta.ClaimOrphan(ctx, key)
	if err != nil {
		sw.errs = append(sw.errs, err)
	}
	if !claimed {
		return
	}
	err = sw.c.Store.Delete(ctx, key)
	sw.c.Deleted(err)
	if err != nil && !objectstore.IsNotExist(err) {
		// The tombstone stays: the next pass lists the key again and
		// finds it claimed.
		sw.errs = append(sw.errs, fmt.Errorf("delete orphan %s: %w", key, err))
		return
	}
	sw.c.OrphansDeleted.Inc()
	sw.c.Logger.Info("deleted orphan object", "key", key)
}

// save stores the cursor; a lost compare-and-swap means another sweeper
// runs, and this one stops for this pass.
func (sw *orphanSweep) save(ctx context.Context) error {
	if sw.lost {
		return nil
	}
	cur, err := sw.c.Meta.SetOrphanSweepCursor(ctx, sw.cur)
	if metadata.IsConflict(err) {
		sw.lost = true
		sw.c.Logger.Debug("orphan sweep cursor moved by another sweeper; stopping this pass")
		return nil
	}
	if err != nil {
		return err
	}
	sw.cur = cur
	return nil
}
