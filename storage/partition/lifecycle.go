package partition

import (
	"context"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/lifecycle"
	"github.com/sediment-io/sediment/storage/manifest"
)

// newLifecycle makes the compactor, the retainer and the index folder
// (storage/lifecycle) that the maintainer runs over the log's partitions,
// and the manifest cache through which they and the readers see folded
// index entries. The metadata store reads manifests through it too, to
// release what a removed manifest entry held.
func (l *Log) newLifecycle() {
	o := l.opts
	l.manifests = &manifest.Cache{Get: func(ctx context.Context, key string) ([]byte, error) {
		b, err := l.store.Get(ctx, key)
		l.m.objectOps.WithLabelValues("get", resultLabel(err)).Inc()
		return b, err
	}}
	l.meta.SetManifestReader(l.manifests.Expand)
	l.compaction = &lifecycle.Compactor{
		Store: l.store, Meta: l.meta, Put: l.up.put, Expand: l.manifests.Expand,
		TargetBytes: o.CompactTargetBytes, ChunkBytes: o.CompactChunkBytes, MinAge: o.CompactMinAge,
		BytesPerSec: o.CompactBytesPerSec, Interval: o.MaintainInterval,
		GCGrace: o.GCGrace, Page: l.compactPage(),
		Got: func(err error) {
			l.m.objectOps.WithLabelValues("get", resultLabel(err)).Inc()
		},
		Segments: l.m.compactedSegments, Bytes: l.m.compactedBytes,
		Logger: l.log,
	}
	l.retention = &lifecycle.Retainer{
		Meta: l.meta, GCGrace: o.GCGrace, Page: o.tune.retentionPage,
		Deleted: l.m.retainedSegments, Logger: l.log,
	}
	l.fold = &lifecycle.Folder{
		Meta: l.meta, Put: l.up.put, Keys: o.IndexFoldKeys, MaxRun: l.foldRun(),
		Folds: l.m.indexFolds, FoldedKeys: l.m.indexFoldedKeys, ManifestBytes: l.m.manifestBytes,
		Logger: l.log,
	}
}

// foldRun bounds the entries one manifest folds. Removing a manifest
// entry (retention, compaction) releases one reference per entry it
// folds, so it stays within a compaction page (compactPage; on etcd a
// quarter of its operations), with room for a unit beside it.
func (l *Log) foldRun() int {
	if n := l.opts.tune.foldRun; n > 0 {
		return n
	}
	page := l.compactPage()
	if page <= 0 {
		page = lifecycle.DefaultCompactPage
	}
	return max(2, page-2)
}

// compactPage bounds the index entries one compaction visit reads, and so
// the segments one rewrite replaces. On a metadata backend that limits a
// transaction (etcd) it is a quarter of its operations: the swap takes a
// condition and a delete per old segment, up to a condition and two writes
// per object it read from, and a write per new index entry.
func (l *Log) compactPage() int {
	if p := l.opts.tune.compactPage; p > 0 {
		return p
	}
	if lim := l.meta.TxnLimits(); lim.MaxOps > 0 {
		return max(4, lim.MaxOps/4)
	}
	return 0 // lifecycle's default
}

// lifecycleParts returns every partition this log owns, in (topic, index)
// order, as compaction and retention see it, each with its fence.
func (l *Log) lifecycleParts() []lifecycle.Partition {
	var parts []lifecycle.Partition
	for _, t := range l.Topics() { // sorted by name
		cfg := t.cfg.Load()
		ret := lifecycle.Retention{Ms: cfg.retentionMs, Bytes: cfg.retentionBytes, Compact: cfg.compact}
		for _, p := range t.Partitions() {
			fence, owned := p.maintainedFence()
			if !owned {
				continue
			}
			parts = append(parts, lifecycle.Partition{
				Fence: fence,
				Topic: t.Name, TopicID: t.ID, Index: p.index, Retention: ret,
				LogStart: func() int64 {
					logStart, _ := p.Offsets()
					return logStart
				},
				RaiseLogStart: p.raiseLogStart,
			})
		}
	}
	return parts
}

// maintainedFence returns p's fence and whether this log owns p, and so
// runs its retention, compaction and producer fold.
func (p *Partition) maintainedFence() ([]metadata.Cond, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.owned || p.releasing {
		return nil, false
	}
	if p.fence == nil {
		return nil, true
	}
	return []metadata.Cond{*p.fence}, true
}

// applyRetention runs one retention pass over every partition.
func (l *Log) applyRetention(ctx context.Context) error {
	return l.retention.Pass(ctx, l.lifecycleParts())
}

// foldIndex runs one pass of the index fold.
func (l *Log) foldIndex(ctx context.Context) error {
	return l.fold.Pass(ctx, l.lifecycleParts())
}

// compact runs one compaction pass.
func (l *Log) compact(ctx context.Context) error {
	return l.compaction.Pass(ctx, l.lifecycleParts())
}
