package partition

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// Object key prefixes this package writes: upload objects and compacted
// segment objects. The orphan sweep looks only under them.
const (
	uploadPrefix  = "data/"
	compactPrefix = "seg/"
)

// collectGarbage deletes objects whose grace period after losing their last
// reference is over, then forgets them.
func (l *Log) collectGarbage(ctx context.Context) error {
	items, err := l.meta.Garbage(ctx, 1000)
	if err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	var errs []error
	for _, g := range items {
		if g.DeleteAfterMs > now {
			continue
		}
		err := l.store.Delete(ctx, g.Key)
		l.m.objectOps.WithLabelValues("delete", resultLabel(err)).Inc()
		if err != nil && !objectstore.IsNotExist(err) {
			errs = append(errs, fmt.Errorf("delete %s: %w", g.Key, err))
			continue
		}
		if err := l.meta.ForgetGarbage(ctx, g); err != nil {
			errs = append(errs, err)
			continue
		}
		l.m.garbageDeleted.Inc()
	}
	return errors.Join(errs...)
}

// sweepOrphans deletes objects older than OrphanGrace that metadata never
// heard of: their PUT landed but the commit that would have referenced them
// did not (a crash between the two, or a commit that failed for good).
func (l *Log) sweepOrphans(ctx context.Context) error {
	cutoff := time.Now().Add(-l.opts.OrphanGrace)
	var orphans []string
	var listErr error
	for _, prefix := range []string{uploadPrefix, compactPrefix} {
		err := l.store.List(ctx, prefix, func(info objectstore.Info) bool {
			if info.Modified.Before(cutoff) && len(orphans) < 10000 {
				orphans = append(orphans, info.Key)
			}
			return len(orphans) < 10000
		})
		listErr = errors.Join(listErr, err)
	}
	var errs []error
	for _, key := range orphans {
		if l.up.inFlight(key) { // asked first: a key leaves the queue only once committed
			continue
		}
		known, err := l.meta.ObjectKnown(ctx, key)
		if err != nil || known {
			errs = append(errs, err)
			continue
		}
		if err := l.store.Delete(ctx, key); err != nil && !objectstore.IsNotExist(err) {
			errs = append(errs, fmt.Errorf("delete orphan %s: %w", key, err))
			continue
		}
		l.m.orphansDeleted.Inc()
		l.log.Info("deleted orphan object", "key", key)
	}
	return errors.Join(append(errs, listErr)...)
}
