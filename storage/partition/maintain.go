package partition

import (
	"context"
	"runtime/pprof"
	"time"
)

// DefaultCompactBytesPerSec is the default of Options.CompactBytesPerSec:
// about what compaction wrote before it had a setting (four 64 MiB objects
// per 30 s pass).
const DefaultCompactBytesPerSec = 8 << 20

// DefaultIndexFoldKeys is the default of Options.IndexFoldKeys.
const DefaultIndexFoldKeys = 64

func (o *Options) setLifecycleDefaults() {
	if o.WALMaxBytes <= 0 {
		o.WALMaxBytes = 1 << 30
	}
	if o.MaintainInterval <= 0 {
		o.MaintainInterval = 30 * time.Second
	}
	if o.CompactTargetBytes <= 0 {
		o.CompactTargetBytes = 64 << 20
	}
	if o.CompactMinAge <= 0 {
		o.CompactMinAge = 10 * time.Minute
	}
	if o.CompactChunkBytes <= 0 {
		o.CompactChunkBytes = 4 << 20
	}
	if o.IndexFoldKeys <= 0 {
		o.IndexFoldKeys = DefaultIndexFoldKeys
	}
	if o.CompactBytesPerSec <= 0 {
		o.CompactBytesPerSec = DefaultCompactBytesPerSec
	}
	if o.GCGrace <= 0 {
		o.GCGrace = time.Minute
	}
	if o.OrphanGrace <= 0 {
		o.OrphanGrace = time.Hour
	}
}

// maintain runs the log's upkeep every MaintainInterval until ctx ends:
// retention, compaction, the index fold, deleting garbage objects, and sweeping orphans
// every OrphanGrace/4, or on every pass while a sweep that stopped at its
// bound has listing left. Each step is bounded; what it leaves, the next
// pass takes.
func (l *Log) maintain(ctx context.Context) {
	pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("sediment", "maintainer")))
	t := time.NewTicker(l.opts.MaintainInterval)
	defer t.Stop()
	var lastSweep time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		l.reads.CloseIdle(time.Now())
		due := time.Since(lastSweep) >= l.opts.OrphanGrace/4
		l.MaintainOnce(ctx, l.sweeps() && (due || l.sweepUnfinished(ctx)))
		if due {
			lastSweep = time.Now()
		}
	}
}

// MaintainOnce runs one pass of upkeep now (tests and tools call it
// directly); sweep includes the orphan sweep. In a cluster the
// bucket-wide steps (deleted topics, garbage, orphans) run only on the
// broker that sweeps (see Ownership.Sweeps).
func (l *Log) MaintainOnce(ctx context.Context, sweep bool) {
	type step = struct {
		name string
		fn   func(context.Context) error
	}
	steps := []step{
		{"retention", l.applyRetention},
		{"compaction", l.compact},
		{"index fold", l.foldIndex},
		{"producer state", l.expireProducers},
	}
	if l.sweeps() {
		steps = append(steps,
			step{"deleted topics", func(ctx context.Context) error { return l.meta.ReleaseDeletedTopics(ctx, l.opts.GCGrace) }},
			step{"garbage collection", l.collectGarbage})
		if sweep {
			steps = append(steps, step{"orphan sweep", l.sweepOrphans})
		}
	}
	for _, s := range steps {
		if ctx.Err() != nil {
			return
		}
		if err := s.fn(ctx); err != nil && ctx.Err() == nil {
			l.log.Warn("maintenance step failed; the next pass retries", "step", s.name, "err", err)
		}
	}
}

// sweeps reports whether this log runs the bucket-wide work (deleted
// topics, garbage and orphans): always on one node, only on the controller
// in a cluster.
func (l *Log) sweeps() bool {
	return l.opts.Ownership == nil || l.opts.Ownership.Sweeps()
}

// sweepUnfinished reports whether the orphan sweep stopped at its bound
// with listing left (its saved cursor is not at the start).
func (l *Log) sweepUnfinished(ctx context.Context) bool {
	cur, err := l.meta.OrphanSweepCursor(ctx)
	return err == nil && cur.After != ""
}
