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

// sweepOrphans runs one bounded pass of the orphan sweep (orphan.go).
func (l *Log) sweepOrphans(ctx context.Context) error {
	cur, err := l.meta.OrphanSweepCursor(ctx)
	if err != nil {
		return err
	}
	sw := &orphanSweep{l: l, cutoff: time.Now().Add(-l.opts.OrphanGrace), cur: cur, budget: orphanSweepKeys}
	err = sw.run(ctx)
	if sw.lost {
		return nil
	}
	after, terr := l.meta.ForgetTombstones(ctx, sw.cur.TombstonesAfter, orphanPage)
	sw.cur.TombstonesAfter = after
	return errors.Join(err, terr, sw.save(ctx))
}
