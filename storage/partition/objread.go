package partition

import (
	"context"
	"fmt"
	"strings"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/manifest"
	"github.com/sediment-io/sediment/storage/readcache"
)

// readObjects serves a read from the object store: it finds the segment
// holding offset in the metadata index and has the read cache return whole
// batches of its region from there, up to maxBytes, never past
// plan.objectEnd. A reader at the end of a region has the start of its
// next segment readied in the background.
func (l *Log) readObjects(ctx context.Context, p *Partition, offset int64, plan readPlan, maxBytes int, first bool) (FetchResult, error) {
	res := plan.res
	seg, ok, err := l.floorSegment(ctx, p, offset)
	if err != nil {
		return res, fmt.Errorf("%w: index lookup: %v", ErrStorage, err)
	}
	if !ok || seg.EndOffset <= offset {
		return res, nil // removed by retention since we planned
	}
	r := region(seg)
	got, err := l.reads.Read(ctx, r, offset, plan.objectEnd, maxBytes, first)
	if err != nil {
		return res, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	switch {
	case got.AtEnd && got.Streamed:
		l.warmNext(ctx, p, r, got.Next)
	case got.AtEnd && !r.Compacted && got.Next < plan.objectEnd:
		// The reader's next fetch starts in another segment: have its
		// block loaded by then, as readahead does within a region.
		l.Prefetch(ctx, p, got.Next)
	}
	if got.Bytes == 0 {
		return res, nil
	}
	res.Bytes, res.Source, res.Wire, res.next = int(got.Bytes), "object", got.Data, got.Next
	l.m.fetchSource.WithLabelValues("object").Inc()
	return res, nil
}

// floorSegment returns the segment with the greatest base offset <=
// offset, looking inside a folded index entry's manifest (a cached,
// immutable list) when the index's floor is one: readers never see a
// manifest entry, only the segments it lists, whose objects stay
// referenced as long as it does.
func (l *Log) floorSegment(ctx context.Context, p *Partition, offset int64) (metadata.Segment, bool, error) {
	seg, ok, err := l.meta.FloorSegment(ctx, p.topic.ID, p.index, offset)
	if err != nil || !ok || !seg.Manifest || seg.EndOffset <= offset {
		return seg, ok, err
	}
	folded, err := l.manifests.Expand(ctx, seg)
	if err != nil {
		return metadata.Segment{}, false, err
	}
	inner, ok := manifest.Floor(folded, offset)
	return inner, ok, nil
}

// region is where seg's batches lie, for the read cache.
func region(seg metadata.Segment) readcache.Region {
	return readcache.Region{Object: seg.Object, Pos: seg.Pos, Len: seg.Len,
		Compacted: strings.HasPrefix(seg.Object, compactPrefix)}
}

// Prefetch starts loading, in the background, the object block that a
// read of p at offset will begin in, when that read comes from a
// multi-partition upload object; otherwise it does nothing. A fetch calls
// it for the partitions it is about to read one after another, so that
// the GETs of the blocks they need run at once instead of in turn (an
// upload object spans a few blocks, and a catch-up fetch reads one region
// of it per partition). The block cache bounds the loads in flight.
func (l *Log) Prefetch(ctx context.Context, p *Partition, offset int64) {
	if !p.readsObjects(offset) {
		return
	}
	seg, ok, err := l.floorSegment(ctx, p, offset)
	if err != nil || !ok || seg.EndOffset <= offset {
		return
	}
	l.reads.Prefetch(region(seg), offset)
}

// warmNext is for a reader that just reached the end of r through a
// stream: when the next segment is in another object, the reader's stream
// (idle at r's end) has nothing more for it and is closed, and the next
// object's stream is warmed if it is a compacted one; within the same
// object the reader's stream goes on.
func (l *Log) warmNext(ctx context.Context, p *Partition, r readcache.Region, next int64) {
	ns, ok, err := l.floorSegment(ctx, p, next)
	if err != nil || !ok || ns.BaseOffset != next || ns.Object == r.Object {
		return
	}
	l.reads.Passed(r)
	l.reads.Warm(region(ns))
}
