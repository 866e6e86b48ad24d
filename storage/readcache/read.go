package readcache

import (
	"context"
	"fmt"

	"github.com/sediment-io/sediment/storage/record"
)

// Region is where one segment's batches lie: Len bytes at Pos of Object,
// whole batches laid end to end.
type Region struct {
	Object   string
	Pos, Len int64
	// Compacted says the object holds one partition's batches alone (a
	// compacted segment). Its readers are sequential: they read through a
	// stream when one can be had, else through the block cache as readers
	// passing through. Other objects (multi-partition uploads) are read
	// through the block cache, whose blocks many readers share.
	Compacted bool
}

// Result is what one read of a region returns.
type Result struct {
	// Data is whole batches back to back, in the slices they arrived in
	// (stream chunks, or cached blocks), where a batch may be split across
	// two; Bytes is their size. Empty when the first batch is at or past
	// the read's end offset.
	Data  [][]byte
	Bytes int64
	// Next is the offset after the last batch of Data.
	Next int64
	// AtEnd says Data ends where the region does: the reader's next read
	// is in the partition's next segment.
	AtEnd bool
	// Streamed says Data came through a stream, which stands idle after
	// it (at the region's end when AtEnd).
	Streamed bool
}

// Read returns the whole batches of r from the one holding offset, before
// endOffset, up to maxBytes (the first batch whole even when larger, when
// first is set: KIP-74). A compacted region is read through a stream when
// one can be had (stream.go), anything else through the block cache. It
// leaves a seek hint for the read that continues after the batches.
func (c *Cache) Read(ctx context.Context, r Region, offset, endOffset int64, maxBytes int, first bool) (Result, error) {
	hint, hinted := c.seeks.get(seekKey{r.Object, r.Pos, offset})
	if r.Compacted {
		if data, next, pos, ok := c.readStreamed(ctx, r, hint, offset, endOffset, maxBytes, first); ok {
			return c.result(r, pos, data, next, true), nil
		}
	}
	pos, err := c.seekBatch(ctx, r, offset, hint, hinted)
	if err != nil {
		return Result{}, err
	}
	read := c.readShared
	if r.Compacted {
		read = c.readPassing
	}
	data, next, err := read(ctx, r, pos, endOffset, maxBytes, first)
	if err != nil {
		return Result{}, err
	}
	return c.result(r, pos, data, next, false), nil
}

// result is the Result of the batches read at pos of r's region; it leaves
// a seek hint for the read that continues after them.
func (c *Cache) result(r Region, pos int64, data spans, next int64, streamed bool) Result {
	n := data.size()
	if n == 0 {
		return Result{}
	}
	if end := pos + n; end < r.Len {
		c.seeks.put(seekKey{r.Object, r.Pos, next}, end)
	}
	return Result{Data: data, Bytes: n, Next: next, AtEnd: pos+n == r.Len, Streamed: streamed}
}

// Prefetch starts loading, in the background, the block where a read of r
// at offset will begin, when r is a region of a multi-partition upload
// object; for a compacted region it does nothing. The block cache bounds
// the loads in flight.
func (c *Cache) Prefetch(r Region, offset int64) {
	if r.Compacted {
		return
	}
	pos := c.seeks.peek(seekKey{r.Object, r.Pos, offset}) // 0 without one: the read starts at the region's start
	c.blocks.readahead(blockKey{r.Object, (r.Pos + pos) / c.blocks.blockSize})
}

// Passed is for a reader that finished r through a stream and goes on in
// another object: the stream idle at r's end has nothing more for it and
// is closed.
func (c *Cache) Passed(r Region) {
	c.streams.discard(r.Object, r.Pos+r.Len)
}

// Warm opens a stream at the start of the compacted region r in the
// background and leaves it idle there, for a reader about to need it (one
// at the end of its previous segment's object), so that its next read
// finds the GET answered and data read ahead. It does nothing for a region
// that is not compacted, or when every stream is in use.
func (c *Cache) Warm(r Region) {
	if r.Compacted {
		c.streams.warm(r.Object, r.Pos)
	}
}

// readStreamed reads r through the stream standing at pos of its region
// (the seek hint, or the region's start), opening one there if none is
// idle: it skips the batches before offset, returns whole batches as
// readPassing does, and the region position they start at. ok is false
// when no stream could be had or it broke; the caller then reads through
// the block cache, whose GETs are retried.
func (c *Cache) readStreamed(ctx context.Context, r Region, pos, offset, endOffset int64, maxBytes int, first bool) (data spans, next, at int64, ok bool) {
	st, err := c.streams.take(ctx, r.Object, r.Pos+pos)
	if err != nil || st == nil {
		return nil, 0, 0, false
	}
	data, next, at, err = c.readStream(ctx, st, r, pos, offset, endOffset, maxBytes, first)
	if err != nil {
		c.streams.drop(st)
		if ctx.Err() == nil {
			c.log.Warn("object stream failed; reading through the block cache", "object", r.Object, "err", err)
		}
		return nil, 0, 0, false
	}
	c.streams.put(st)
	return data, next, at, true
}

// readStream is readStreamed once it holds st.
func (c *Cache) readStream(ctx context.Context, st *segStream, r Region, pos, offset, endOffset int64, maxBytes int, first bool) (spans, int64, int64, error) {
	for { // skip the batches before the one holding offset
		if r.Len-pos < record.BatchHeaderLen {
			return nil, 0, 0, fmt.Errorf("readcache: object %s has no batch with offset %d", r.Object, offset)
		}
		hs, err := st.read(ctx, record.BatchHeaderLen)
		if err != nil {
			return nil, 0, 0, err
		}
		if hs.size() < record.BatchHeaderLen {
			return nil, 0, 0, fmt.Errorf("readcache: object %s: truncated batch at %d", r.Object, r.Pos+pos)
		}
		h := hs.at(0, record.BatchHeaderLen)
		size := record.BatchSize(h)
		if size < record.BatchHeaderLen || size > r.Len-pos {
			return nil, 0, 0, fmt.Errorf("readcache: object %s: bad batch length at %d", r.Object, r.Pos+pos)
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
	n := min(max(int64(maxBytes), record.BatchHeaderLen), r.Len-pos)
	data, err := st.read(ctx, n)
	if err != nil {
		return nil, 0, 0, err
	}
	if data.size() < n {
		return nil, 0, 0, fmt.Errorf("readcache: object %s ends before byte %d", r.Object, r.Pos+pos+n)
	}
	end, next, cut, err := wholeBatches(data, r, pos, endOffset)
	if err != nil {
		return nil, 0, 0, err
	}
	if end == 0 && cut > 0 && first { // a first batch larger than maxBytes comes whole (KIP-74)
		rest, err := st.read(ctx, cut-data.size())
		if err != nil {
			return nil, 0, 0, err
		}
		data = append(data, rest...)
		if end, next, _, err = wholeBatches(data, r, pos, endOffset); err != nil || end == 0 {
			return nil, 0, 0, fmt.Errorf("readcache: object %s ends inside the batch at %d: %v", r.Object, r.Pos+pos, err)
		}
	}
	st.unread(data.cut(end, data.size()))
	return data.cut(0, end), next, pos, nil
}

// wholeBatches returns where the run of whole batches at the start of data
// (read at pos of r's region) ends, before endOffset, and the offset
// after them; cut is the size of the batch data ends inside, 0 if none.
func wholeBatches(data spans, r Region, pos, endOffset int64) (end, next, cut int64, err error) {
	size := data.size()
	for end+record.BatchHeaderLen <= size {
		h := data.at(end, record.BatchHeaderLen)
		n := record.BatchSize(h)
		if n < record.BatchHeaderLen || n > r.Len-pos-end {
			return 0, 0, 0, fmt.Errorf("readcache: object %s: bad batch length at %d", r.Object, r.Pos+pos+end)
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

// readShared returns the whole batches of r's region from pos, up to
// maxBytes (at least one when first) and before endOffset, and the offset
// after them, for a region of a multi-partition upload object: it finds
// their end by walking the batch headers, then reads just those bytes, and
// the blocks stay cached for the other partitions' readers.
func (c *Cache) readShared(ctx context.Context, r Region, pos, endOffset int64, maxBytes int, first bool) (spans, int64, error) {
	end, next, err := c.spanBatches(ctx, r, pos, endOffset, maxBytes, first)
	if err != nil || end == pos {
		return nil, 0, err
	}
	data, err := c.blocks.read(ctx, r.Object, r.Pos+pos, end-pos, r.Pos+r.Len, false)
	if err != nil {
		return nil, 0, err
	}
	return data, next, nil
}

// readPassing is readShared for a compacted segment when no stream can be
// had: it reads maxBytes from pos in one go, as a sequential reader passing
// through (see blockCache.read), and keeps the whole batches in it.
// Walking the headers first would load the next block before the reader
// has let go of the one it is in.
func (c *Cache) readPassing(ctx context.Context, r Region, pos, endOffset int64, maxBytes int, first bool) (spans, int64, error) {
	n := min(max(int64(maxBytes), record.BatchHeaderLen), r.Len-pos)
	data, err := c.blocks.read(ctx, r.Object, r.Pos+pos, n, r.Pos+r.Len, true)
	if err != nil {
		return nil, 0, err
	}
	end, next, cut, err := wholeBatches(data, r, pos, endOffset)
	if err != nil {
		return nil, 0, err
	}
	if end == 0 && cut > 0 && first {
		return c.readShared(ctx, r, pos, endOffset, maxBytes, first)
	}
	return data.cut(0, end), next, nil
}

// batchHead is the part of a stored batch header needed to walk a region.
type batchHead struct {
	base, last int64
	size       int64
}

// headAt reads the header of the batch at pos within the segment's region.
func (c *Cache) headAt(ctx context.Context, r Region, pos int64) (batchHead, error) {
	if r.Len-pos < record.BatchHeaderLen {
		return batchHead{}, fmt.Errorf("readcache: object %s: truncated batch at %d", r.Object, r.Pos+pos)
	}
	hs, err := c.blocks.read(ctx, r.Object, r.Pos+pos, record.BatchHeaderLen, r.Pos+r.Len, false)
	if err != nil {
		return batchHead{}, err
	}
	h := hs.at(0, record.BatchHeaderLen)
	size := record.BatchSize(h)
	if size < record.BatchHeaderLen || size > r.Len-pos {
		return batchHead{}, fmt.Errorf("readcache: object %s: bad batch length at %d", r.Object, r.Pos+pos)
	}
	return batchHead{base: record.BaseOffset(h), last: record.LastOffset(h), size: size}, nil
}

// seekBatch returns the region position of the batch holding offset,
// starting from the hint left by the previous read when there is one.
func (c *Cache) seekBatch(ctx context.Context, r Region, offset, hint int64, hinted bool) (int64, error) {
	if hinted {
		if h, err := c.headAt(ctx, r, hint); err == nil && h.base <= offset && offset <= h.last {
			return hint, nil
		}
	}
	for pos := int64(0); pos < r.Len; {
		h, err := c.headAt(ctx, r, pos)
		if err != nil {
			return 0, err
		}
		if h.last >= offset {
			return pos, nil
		}
		pos += h.size
	}
	return 0, fmt.Errorf("readcache: object %s has no batch with offset %d", r.Object, offset)
}

// spanBatches returns where the run of whole batches starting at pos ends,
// limited by maxBytes (at least one batch when first) and by endOffset, and
// the offset after the run's last batch.
func (c *Cache) spanBatches(ctx context.Context, r Region, pos, endOffset int64, maxBytes int, first bool) (end, next int64, err error) {
	end = pos
	for end < r.Len {
		h, err := c.headAt(ctx, r, end)
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
