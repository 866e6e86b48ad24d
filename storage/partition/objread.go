package partition

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/sediment-io/sediment/metadata"
)

// readObjects serves a read from the object store: it finds the segment
// holding offset in the metadata index, walks its batch headers through the
// block cache to the batch holding offset, and returns whole batches up to
// maxBytes, never past plan.objectEnd.
func (l *Log) readObjects(ctx context.Context, p *Partition, offset int64, plan readPlan, maxBytes int, first bool) (FetchResult, error) {
	res := plan.res
	seg, ok, err := l.meta.FloorSegment(ctx, p.topic.ID, p.index, offset)
	if err != nil {
		return res, fmt.Errorf("%w: index lookup: %v", ErrStorage, err)
	}
	if !ok || seg.EndOffset <= offset {
		return res, nil // removed by retention since we planned
	}
	pos, err := l.seekBatch(ctx, seg, offset)
	if err != nil {
		return res, err
	}
	read := l.readShared
	if strings.HasPrefix(seg.Object, compactPrefix) {
		read = l.readPassing
	}
	data, next, err := read(ctx, seg, pos, plan.objectEnd, maxBytes, first)
	if err != nil || len(data) == 0 {
		return res, err
	}
	if end := pos + int64(len(data)); end < seg.Len {
		l.seeks.put(seekKey{seg.Object, seg.Pos, next}, end)
	}
	err = splitBatches(data, func(_, _ int64, raw []byte) bool {
		res.Batches = append(res.Batches, raw)
		return true
	})
	res.Bytes, res.Source = len(data), "object"
	l.m.fetchSource.WithLabelValues("object").Inc()
	return res, err
}

// readShared returns the whole batches of seg's region from pos, up to
// maxBytes (at least one when first) and before endOffset, and the offset
// after them, for a region of a multi-partition upload object: it finds
// their end by walking the batch headers, then reads just those bytes, and
// the blocks stay cached for the other partitions' readers.
func (l *Log) readShared(ctx context.Context, seg metadata.Segment, pos, endOffset int64, maxBytes int, first bool) ([]byte, int64, error) {
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

// readPassing is readShared for a compacted segment, whose object is this
// partition's alone: it reads maxBytes from pos in one go, as a sequential
// reader passing through (see blockCache.read), and keeps the whole
// batches in it. Walking the headers first would load the next block before
// the reader has let go of the one it is in.
func (l *Log) readPassing(ctx context.Context, seg metadata.Segment, pos, endOffset int64, maxBytes int, first bool) ([]byte, int64, error) {
	n := min(max(int64(maxBytes), batchHeaderLen), seg.Len-pos)
	data, err := l.blocks.read(ctx, seg.Object, seg.Pos+pos, n, seg.Pos+seg.Len, true)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	end, next := int64(0), int64(0)
	for end+batchHeaderLen <= int64(len(data)) {
		h := data[end:]
		size := int64(int32(binary.BigEndian.Uint32(h[batchLengthOff:]))) + 12
		if size < batchHeaderLen || size > seg.Len-pos-end {
			return nil, 0, fmt.Errorf("%w: object %s: bad batch length at %d", ErrStorage, seg.Object, seg.Pos+pos+end)
		}
		last := batchBaseOffset(h) + int64(int32(binary.BigEndian.Uint32(h[batchLastDelta:])))
		if last >= endOffset {
			break
		}
		if end+size > int64(len(data)) {
			if end == 0 && first { // a first batch larger than maxBytes comes whole (KIP-74)
				return l.readShared(ctx, seg, pos, endOffset, maxBytes, first)
			}
			break
		}
		end, next = end+size, last+1
	}
	return data[:end], next, nil
}

// batchHead is the part of a stored batch header needed to walk a region.
type batchHead struct {
	base, last int64
	size       int64
}

// headAt reads the header of the batch at pos within the segment's region.
func (l *Log) headAt(ctx context.Context, seg metadata.Segment, pos int64) (batchHead, error) {
	if seg.Len-pos < batchHeaderLen {
		return batchHead{}, fmt.Errorf("%w: object %s: truncated batch at %d", ErrStorage, seg.Object, seg.Pos+pos)
	}
	h, err := l.blocks.read(ctx, seg.Object, seg.Pos+pos, batchHeaderLen, seg.Pos+seg.Len, false)
	if err != nil {
		return batchHead{}, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	size := int64(int32(binary.BigEndian.Uint32(h[batchLengthOff:]))) + 12
	if size < batchHeaderLen || size > seg.Len-pos {
		return batchHead{}, fmt.Errorf("%w: object %s: bad batch length at %d", ErrStorage, seg.Object, seg.Pos+pos)
	}
	base := batchBaseOffset(h)
	return batchHead{base: base, last: base + int64(int32(binary.BigEndian.Uint32(h[batchLastDelta:]))), size: size}, nil
}

// seekBatch returns the region position of the batch holding offset,
// starting from a hint left by the previous read when there is one.
func (l *Log) seekBatch(ctx context.Context, seg metadata.Segment, offset int64) (int64, error) {
	if pos, ok := l.seeks.get(seekKey{seg.Object, seg.Pos, offset}); ok {
		if h, err := l.headAt(ctx, seg, pos); err == nil && h.base <= offset && offset <= h.last {
			return pos, nil
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
