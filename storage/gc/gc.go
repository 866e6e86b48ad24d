// Package gc deletes the objects nothing references any more: garbage
// (objects whose last reference went away, once their grace period is over)
// and orphans (objects whose PUT landed but whose commit never did, see
// orphan.go). It keeps no state between passes: metadata holds the garbage
// records, the tombstones and the sweep's cursor, and the caller
// (storage/partition's maintainer) runs the passes.
package gc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment-io/sediment/metadata"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// Collector runs the passes over one bucket and its metadata. All fields
// are required; a Collector is used by one goroutine at a time.
type Collector struct {
	Store objectstore.Store
	Meta  *metadata.Store
	// Prefixes are the key prefixes the orphan sweep lists, in key order:
	// only the owner's objects live under them.
	Prefixes []string
	// Grace keeps the orphan sweep away from objects modified less than
	// Grace ago (against the store's modification time).
	Grace time.Duration
	// SweepKeys bounds the keys one sweep pass examines; Page is how many
	// listed keys are checked against metadata at once.
	SweepKeys, Page int
	// InFlight reports an object its owner cut and has not committed yet;
	// the sweep keeps it whatever its age.
	InFlight func(key string) bool
	// Deleted is called with the result of every object deletion.
	Deleted                        func(err error)
	GarbageDeleted, OrphansDeleted prometheus.Counter
	Logger                         *slog.Logger
}

// CollectGarbage deletes objects whose grace period after losing their last
// reference is over, then forgets them.
func (c *Collector) CollectGarbage(ctx context.Context) error {
	items, err := c.Meta.Garbage(ctx, 1000)
	if err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	var errs []error
	for _, g := range items {
		if g.DeleteAfterMs > now {
			continue
		}
		err := c.Store.Delete(ctx, g.Key)
		c.Deleted(err)
		if err != nil && !objectstore.IsNotExist(err) {
			errs = append(errs, fmt.Errorf("delete %s: %w", g.Key, err))
			continue
		}
		if err := c.Meta.ForgetGarbage(ctx, g); err != nil {
			errs = append(errs, err)
			continue
		}
		c.GarbageDeleted.Inc()
	}
	return errors.Join(errs...)
}

// SweepOrphans runs one bounded pass of the orphan sweep (orphan.go).
func (c *Collector) SweepOrphans(ctx context.Context) error {
	cur, err := c.Meta.OrphanSweepCursor(ctx)
	if err != nil {
		return err
	}
	sw := &orphanSweep{c: c, cutoff: time.Now().Add(-c.Grace), cur: cur, budget: c.SweepKeys}
	err = sw.run(ctx)
	if sw.lost {
		return nil
	}
	after, terr := c.Meta.ForgetTombstones(ctx, sw.cur.TombstonesAfter, c.Page)
	sw.cur.TombstonesAfter = after
	return errors.Join(err, terr, sw.save(ctx))
}
