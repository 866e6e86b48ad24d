package partition

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/sediment-io/sediment/metadata"
)

// maxSegmentsPerRead bounds the segments one read walks: enough to fill a
// fetch from the small multi-partition upload objects (a partition's region
// in each is often well under a MiB), few enough to keep one fetch's
// metadata lookups and block loads short.
const maxSegmentsPerRead = 32

// readObjects serves a read from the object store: segment after segment
// of the metadata index, starting with the one holding offset, it returns
// whole batches up to maxBytes, never past plan.objectEnd. When it stops
// before objectEnd it prefetches the first block of the next segment, so a
// sequential consumer's next fetch finds it loaded (or on its way).
func (l *Log) readObjects(ctx context.Context, p *Partition, offset int64, plan readPlan, maxBytes int, first bool) (FetchResult, error) {
	res := plan.res
	for range maxSegmentsPerRead {
		if offset >= plan.objectEnd || res.Bytes >= maxBytes {
			return res, nil
		}
		seg, ok, err := l.meta.FloorSegment(ctx, p.topic.ID, p.index, offset)
		if err != nil {
			return res, l.partialRead(res, fmt.Errorf("%w: index lookup: %v", ErrStorage, err))
		}
		if !ok || seg.EndOffset <= offset {
			return res, nil // removed by retention since we planned
		}
		data, next, err := l.readSegment(ctx, seg, offset, plan.objectEnd, maxBytes-res.Bytes, first && res.Bytes == 0)
		if err != nil {
			return res, l.partialRead(res, err)
		}
		if len(data) == 0 {
			break // the next batch does not fit
		}
		if err := splitBatches(data, func(_, _ int64, raw []byte) bool {
			res.Batches = append(res.Batches, raw)
			return true
		}); err != nil {
			return res, err
		}
		if res.Bytes == 0 {
			l.m.fetchSource.WithLabelValues("object").Inc()
		}
		res.Bytes, res.Source, offset = res.Bytes+len(data), "object", next
	}
	l.prefetchSegment(ctx, p, offset, plan.objectEnd)
	return res, nil
}

// partialRead is the error of a read that failed after it had found some
// batches: none, so the consumer gets those and retries the rest.
func (l *Log) partialRead(res FetchResult, err error) error {
	if len(res.Batches) > 0 {
		return nil
	}
	return err
}

// readSegment returns the whole batches of seg from the one holding offset,
// up to maxBytes (at least one when first) and before endOffset, and the
// offset after them.
func (l *Log) readSegment(ctx context.Context, seg metadata.Segment, offset, endOffset int64, maxBytes int, first bool) ([]byte, int64, error) {
	pos, err := l.seekBatch(ctx, seg, offset)
	if err != nil {
		return nil, 0, err
	}
	end, next, err := l.spanBatches(ctx, seg, pos, endOffset, maxBytes, first)
	if err != nil || end == pos {
		return nil, 0, err
	}
	if end < seg.Len {
		l.seeks.put(seekKey{seg.Object, seg.Pos, next}, end)
	}
	data, err := l.blocks.read(ctx, seg.Object, seg.Pos+pos, end-pos, seg.Pos+seg.Len)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	return data, next, nil
}

// prefetchSegment starts loading the block that holds offset when it lies
// in another segment than the one just read. Best effort: a failure here
// is met again, and reported, by the read that needs the block.
func (l *Log) prefetchSegment(ctx context.Context, p *Partition, offset, objectEnd int64) {
	if offset >= objectEnd {
		return
	}
	seg, ok, err := l.meta.FloorSegment(ctx, p.topic.ID, p.index, offset)
	if err != nil || !ok || seg.EndOffset <= offset {
		return
	}
	pos := seg.Pos
	if hint, ok := l.seeks.get(seekKey{seg.Object, seg.Pos, offset}); ok {
		pos += hint
	}
	l.blocks.readahead(blockKey{seg.Object, pos / l.blocks.blockSize})
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
	h, err := l.blocks.read(ctx, seg.Object, seg.Pos+pos, batchHeaderLen, seg.Pos+seg.Len)
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
