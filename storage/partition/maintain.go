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
// retention, compaction, deleting garbage objects, and sweeping orphans
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
		l.MaintainOnce(ctx, due || l.sweepUnfinished(ctx))
		if due {
			lastSweep = time.Now()
		}
	}
}

// MaintainOnce runs one pass of upkeep now (tests and tools call it
// directly); sweep includes the orphan sweep.
func (l *Log) MaintainOnce(ctx context.Context, sweep bool) {
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"retention", l.applyRetention},
		{"compaction", l.compact},
		{"producer state", l.expireProducers},
		{"deleted topics", func(ctx context.Context) error { return l.meta.ReleaseDeletedTopics(ctx, l.opts.GCGrace) }},
		{"garbage collection", l.collectGarbage},
	}
	if sweep {
		steps = append(steps, struct {
			name string
			fn   func(context.Context) error
		}{"orphan sweep", l.sweepOrphans})
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

// sweepUnfinished reports whether the orphan sweep stopped at its bound
// with listing left (its saved cursor is not at the start).
func (l *Log) sweepUnfinished(ctx context.Context) bool {
	cur, err := l.meta.OrphanSweepCursor(ctx)
	return err == nil && cur.After != ""
}
