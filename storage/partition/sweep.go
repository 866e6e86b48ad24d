package partition

import (
	"context"

	"github.com/sediment-io/sediment/storage/gc"
	"github.com/sediment-io/sediment/storage/lifecycle"
	"github.com/sediment-io/sediment/storage/manifest"
)

// Object key prefixes of the log's objects: upload objects (the uploader's),
// manifests (storage/lifecycle's index fold) and compacted segment objects
// (its compaction). The orphan sweep looks only under them.
const (
	uploadPrefix   = "data/"
	manifestPrefix = manifest.Prefix
	compactPrefix  = lifecycle.CompactedPrefix
)

// orphanSweepKeys bounds the keys one sweep pass examines (gc.Collector's
// SweepKeys); a variable for tests.
var orphanSweepKeys = 100_000

// orphanPage is how many listed keys the sweep checks against metadata at
// once (gc.Collector's Page); a variable for tests.
var orphanPage = 1000

// collector returns the garbage collector of the log's bucket; the
// maintainer goroutine runs its passes.
func (l *Log) collector() *gc.Collector {
	return &gc.Collector{
		Store: l.store, Meta: l.meta,
		Prefixes:  []string{uploadPrefix, manifestPrefix, compactPrefix}, // in key order
		Grace:     l.opts.OrphanGrace,
		SweepKeys: orphanSweepKeys, Page: orphanPage,
		InFlight: l.up.inFlight,
		Deleted: func(err error) {
			l.m.objectOps.WithLabelValues("delete", resultLabel(err)).Inc()
		},
		GarbageDeleted: l.m.garbageDeleted, OrphansDeleted: l.m.orphansDeleted,
		Logger: l.log,
	}
}

// collectGarbage deletes the objects whose grace period after losing their
// last reference is over.
func (l *Log) collectGarbage(ctx context.Context) error {
	return l.collector().CollectGarbage(ctx)
}

// sweepOrphans runs one bounded pass of the orphan sweep.
func (l *Log) sweepOrphans(ctx context.Context) error {
	return l.collector().SweepOrphans(ctx)
}
