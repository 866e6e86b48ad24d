package partition

import (
	"context"
	"fmt"
	"strings"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/record"
)

// readObjects serves a read from the object store: it finds the segment
// holding offset in the metadata index, finds the batch holding offset in
// its region, and returns whole batches up to maxBytes, never past
// plan.objectEnd. A compacted segment is read through a stream when one can
// be had (stream.go), anything else through the block cache.
func (l *Log) readObjects(ctx context.Context, p *Partition, offset int64, plan readPlan, maxBytes int, first bool) (FetchResult, error) {
	res := plan.res
	seg, ok, err := l.meta.FloorSegment(ctx, p.topic.ID, p.index, offset)
	if err != nil {
		return res, fmt.Errorf("%w: index lookup: %v", ErrStorage, err)
	}
	if !ok || seg.EndOffset <= offset {
		return res, nil // removed by retention since we planned
	}
	hint, hinted := l.seeks.get(seekKey{seg.Object, seg.Pos, offset})
	compacted := strings.HasPrefix(seg.Object, compactPrefix)
	if compacted {
		if data, next, pos, ok := l.readStreamed(ctx, seg, hint, offset, plan.objectEnd, maxBytes, first); ok {
			if pos+data.size() == seg.Len {
				l.warmNext(ctx, p, seg, next)
			}
			return l.objectResult(res, seg, pos, data, next)
		}
	}
	pos, err := l.seekBatch(ctx, seg, offset, hint, hinted)
	if err != nil {
		return res, err
	}
	read := l.readShared
	if compacted {
		read = l.readPassing
	}
	data, next, err := read(ctx, seg, pos, plan.objectEnd, maxBytes, first)
	if err != nil {
		return res, err
	}
	if !compacted && pos+data.size() == seg.Len && next < plan.objectEnd {
		// The reader's next fetch starts in another segment: have its
		// block loaded by then, as readahead does within a region.
		l.Prefetch(ctx, p, next)
	}
	return l.objectResult(res, seg, pos, data, next)
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
	seg, ok, err := l.meta.FloorSegment(ctx, p.topic.ID, p.index, offset)
	if err != nil || !ok || seg.EndOffset <= offset || strings.HasPrefix(seg.Object, compactPrefix) {
		return
	}
	pos := l.seeks.peek(seekKey{seg.Object, seg.Pos, offset}) // 0 without one: the read starts at the region's start
	l.blocks.readahead(blockKey{seg.Object, (seg.Pos + pos) / l.blocks.blockSize})
}

// warmNext is for a reader that just reached the end of seg through a
// stream: when the next segment is in another object, the reader's stream
// (idle at seg's end) has nothing more for it and is closed, and the next
// object's stream is warmed if it is a compacted one; within the same
// object the reader's stream goes on.
func (l *Log) warmNext(ctx context.Context, p *Partition, seg metadata.Segment, next int64) {
	ns, ok, err := l.meta.FloorSegment(ctx, p.topic.ID, p.index, next)
	if err != nil || !ok || ns.BaseOffset != next || ns.Object == seg.Object {
		return
	}
	l.streams.discard(seg.Object, seg.Pos+seg.Len)
	if strings.HasPrefix(ns.Object, compactPrefix) {
		l.streams.warm(ns.Object, ns.Pos)
	}
}

// objectResult fills res with the batches read at pos of seg's region (as
// Wire: they are whole batches, the read checked their framing) and leaves
// a seek hint for the read that continues after them.
func (l *Log) objectResult(res FetchResult, seg metadata.Segment, pos int64, data spans, next int64) (FetchResult, error) {
	n := data.size()
	if n == 0 {
		return res, nil
	}
	if end := pos + n; end < seg.Len {
		l.seeks.put(seekKey{seg.Object, seg.Pos, next}, end)
	}
	res.Bytes, res.Source, res.Wire = int(n), "object", data
	l.m.fetchSource.WithLabelValues("object").Inc()
	return res, nil
}

// readStreamed reads seg through the stream standing at pos of its region
// (the seek hint, or the region's start), opening one there if none is
// idle: it skips the batches before offset, returns whole batches as
// readPassing does, and the region position they start at. ok is false
// when no stream could be had or it broke; the caller then reads through
// the block cache, whose GETs are retried.
func (l *Log) readStreamed(ctx context.Context, seg metadata.Segment, pos, offset, endOffset int64, maxBytes int, first bool) (data spans, next, at int64, ok bool) {
	st, err := l.streams.take(ctx, seg.Object, seg.Pos+pos)
	if err != nil || st == nil {
		return nil, 0, 0, false
	}
	data, next, at, err = l.readStream(ctx, st, seg, pos, offset, endOffset, maxBytes, first)
	if err != nil {
		l.streams.drop(st)
		if ctx.Err() == nil {
			l.log.Warn("object stream failed; reading through the block cache", "object", seg.Object, "err", err)
		}
		return nil, 0, 0, false
	}
	l.streams.put(st)
	return data, next, at, true
}

// readStream is readStreamed once it holds st.
func (l *Log) readStream(ctx context.Context, st *segStream, seg metadata.Segment, pos, offset, endOffset int64, maxBytes int, first bool) (spans, int64, int64, error) {
	for { // skip the batches before the one holding offset
		if seg.Len-pos < record.BatchHeaderLen {
			return nil, 0, 0, fmt.Errorf("object %s has no batch with offset %d", seg.Object, offset)
		}
		hs, err := st.read(ctx, record.BatchHeaderLen)
		if err != nil {
			return nil, 0, 0, err
		}
		if hs.size() < record.BatchHeaderLen {
			return nil, 0, 0, fmt.Errorf("object %s: truncated batch at %d", seg.Object, seg.Pos+pos)
		}
		h := hs.at(0, record.BatchHeaderLen)
		size := record.BatchSize(h)
		if size < record.BatchHeaderLen || size > seg.Len-pos {
			return nil, 0, 0, fmt.Errorf("object %s: bad batch length at %d", seg.Object, seg.Pos+pos)
		}
		if record.LastOffset(h) >= offset {
			st.unread(hs)
			break
		}
		if _, err := st.read(ctx, size-record.BatchHeaderLen); err != nil {
			return nil, 0, 0, err
		}
		pos += size
	}
	n := min(max(int64(maxBytes), record.BatchHeaderLen), seg.Len-pos)
	data, err := st.read(ctx, n)
	if err != nil {
		return nil, 0, 0, err
	}
	if data.size() < n {
		return nil, 0, 0, fmt.Errorf("object %s ends before byte %d", seg.Object, seg.Pos+pos+n)
	}
	end, next, cut, err := wholeBatches(data, seg, pos, endOffset)
	if err != nil {
		return nil, 0, 0, err
	}
	if end == 0 && cut > 0 && first { // a first batch larger than maxBytes comes whole (KIP-74)
		rest, err := st.read(ctx, cut-data.size())
		if err != nil {
			return nil, 0, 0, err
		}
		data = append(data, rest...)
		if end, next, _, err = wholeBatches(data, seg, pos, endOffset); err != nil || end == 0 {
			return nil, 0, 0, fmt.Errorf("object %s ends inside the batch at %d: %v", seg.Object, seg.Pos+pos, err)
		}
	}
	st.unread(data.cut(end, data.size()))
	return data.cut(0, end), next, pos, nil
}

// wholeBatches returns where the run of whole batches at the start of data
// (read at pos of seg's region) ends, before endOffset, and the offset
// after them; cut is the size of the batch data ends inside, 0 if none.
func wholeBatches(data spans, seg metadata.Segment, pos, endOffset int64) (end, next, cut int64, err error) {
	size := data.size()
	for end+record.BatchHeaderLen <= size {
		h := data.at(end, record.BatchHeaderLen)
		n := record.BatchSize(h)
		if n < record.BatchHeaderLen || n > seg.Len-pos-end {
			return 0, 0, 0, fmt.Errorf("%w: object %s: bad batch length at %d", ErrStorage, seg.Object, seg.Pos+pos+end)
		}
		last := record.LastOffset(h)
		if last >= endOffset {
			break
		}
		if end+n > size {
			return end, next, n, nil
		}
		end, next = end+n, last+1
	}
	return end, next, 0, nil
}

// readShared returns the whole batches of seg's region from pos, up to
// maxBytes (at least one when first) and before endOffset, and the offset
// after them, for a region of a multi-partition upload object: it finds
// their end by walking the batch headers, then reads just those bytes, and
// the blocks stay cached for the other partitions' readers.
func (l *Log) readShared(ctx context.Context, seg metadata.Segment, pos, endOffset int64, maxBytes int, first bool) (spans, int64, error) {
	end, next, err := l.spanBatches(ctx, seg, pos, endOffset, maxBytes, first)
	if err != nil || end == pos {
		return nil, 0, err
	}
	data, err := l.blocks.read(ctx, seg.Object, seg.Pos+pos, end-pos, seg.Pos+seg.Len, false)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	return data, next, nil
}

// readPassing is readShared for a compacted segment when no stream can be
// had: it reads maxBytes from pos in one go, as a sequential reader passing
// through (see blockCache.read), and keeps the whole batches in it.
// Walking the headers first would load the next block before the reader
// has let go of the one it is in.
func (l *Log) readPassing(ctx context.Context, seg metadata.Segment, pos, endOffset int64, maxBytes int, first bool) (spans, int64, error) {
	n := min(max(int64(maxBytes), record.BatchHeaderLen), seg.Len-pos)
	data, err := l.blocks.read(ctx, seg.Object, seg.Pos+pos, n, seg.Pos+seg.Len, true)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	end, next, cut, err := wholeBatches(data, seg, pos, endOffset)
	if err != nil {
		return nil, 0, err
	}
	if end == 0 && cut > 0 && first {
		return l.readShared(ctx, seg, pos, endOffset, maxBytes, first)
	}
	return data.cut(0, end), next, nil
}

// batchHead is the part of a stored batch header needed to walk a region.
type batchHead struct {
	base, last int64
	size       int64
}

// headAt reads the header of the batch at pos within the segment's region.
func (l *Log) headAt(ctx context.Context, seg metadata.Segment, pos int64) (batchHead, error) {
	if seg.Len-pos < record.BatchHeaderLen {
		return batchHead{}, fmt.Errorf("%w: object %s: truncated batch at %d", ErrStorage, seg.Object, seg.Pos+pos)
	}
	hs, err := l.blocks.read(ctx, seg.Object, seg.Pos+pos, record.BatchHeaderLen, seg.Pos+seg.Len, false)
	if err != nil {
		return batchHead{}, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	h := hs.at(0, record.BatchHeaderLen)
	size := record.BatchSize(h)
	if size < record.BatchHeaderLen || size > seg.Len-pos {
		return batchHead{}, fmt.Errorf("%w: object %s: bad batch length at %d", ErrStorage, seg.Object, seg.Pos+pos)
	}
	return batchHead{base: record.BaseOffset(h), last: record.LastOffset(h), size: size}, nil
}

// seekBatch returns the region position of the batch holding offset,
// starting from the hint left by the previous read when there is one.
func (l *Log) seekBatch(ctx context.Context, seg metadata.Segment, offset, hint int64, hinted bool) (int64, error) {
	if hinted {
		if h, err := l.headAt(ctx, seg, hint); err == nil && h.base <= offset && offset <= h.last {
			return hint, nil
		}
	}
	for pos := int64(0); pos < seg.Len; {
		h, err := l.headAt(ctx, seg, pos)
		if err != nil {
			return 0, err
		}
		if h.last >= offset {
			return pos, nil
		}
		pos += h.size
	}
	return 0, fmt.Errorf("%w: object %s has no batch with offset %d", ErrStorage, seg.Object, offset)
}

// spanBatches returns where the run of whole batches starting at pos ends,
// limited by maxBytes (at least one batch when first) and by endOffset, and
// the offset after the run's last batch.
func (l *Log) spanBatches(ctx context.Context, seg metadata.Segment, pos, endOffset int64, maxBytes int, first bool) (end, next int64, err error) {
	end = pos
	for end < seg.Len {
		h, err := l.headAt(ctx, seg, end)
		if err != nil {
			return 0, 0, err
		}
		if h.last >= endOffset || (end-pos+h.size > int64(maxBytes) && !(first && end == pos)) {
			break
		}
		end, next = end+h.size, h.last+1
	}
	return end, next, nil
}
