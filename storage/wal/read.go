package wal

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"time"
)

// ReadAt returns the frame that starts at pos, a position returned by
// Append or replay and not yet released. It finds frames still pending or
// being written as well as frames in segment files. The payload is a fresh
// copy. A pos below the oldest retained segment gives an error wrapping
// ErrReleased; a pos that is not the start of a frame gives an error.
func (w *WAL) ReadAt(pos Pos) (RecordType, []byte, error) {
	w.mu.Lock()
	seg, end, typ, payload, err := w.locateLocked(pos)
	w.mu.Unlock()
	if seg == nil {
		return typ, payload, err
	}
	// File reads happen outside the lock so they never hold up Append.
	return readFrameFile(seg, pos, end)
}

// locateLocked returns the segment holding pos and the end of the written
// data in it, or, for a frame not yet in a file, the frame itself.
func (w *WAL) locateLocked(pos Pos) (seg *segment, end Pos, typ RecordType, payload []byte, err error) {
	switch {
	case w.closed:
		return nil, 0, 0, nil, ErrClosed
	case pos < w.segs[0].start:
		return nil, 0, 0, nil, fmt.Errorf("wal: read at pos %d: %w (oldest retained pos is %d)", pos, ErrReleased, w.segs[0].start)
	case pos >= w.head:
		return nil, 0, 0, nil, fmt.Errorf("wal: read at pos %d: at or beyond head %d", pos, w.head)
	case pos >= w.pendingStart:
		typ, payload, err = frameFromBuffer(w.pending, pos-w.pendingStart, pos)
		return nil, 0, typ, payload, err
	case pos >= w.written:
		typ, payload, err = frameFromBuffer(w.inflight, pos-w.inflightStart, pos)
		return nil, 0, typ, payload, err
	}
	i := sort.Search(len(w.segs), func(i int) bool { return w.segs[i].start > pos }) - 1
	end = w.written
	if i+1 < len(w.segs) {
		end = w.segs[i+1].start
	}
	return w.segs[i], end, 0, nil, nil
}

// frameFromBuffer decodes a copy of the frame at offset off of buf.
func frameFromBuffer(buf *frameBuffer, off, pos Pos) (RecordType, []byte, error) {
	var hb [frameHeaderSize]byte
	if !buf.readAt(hb[:], int(off)) {
		return 0, nil, noFrame(pos, "buffer too short")
	}
	h := parseFrameHeader(hb[:])
	payload := make([]byte, h.length)
	if !buf.readAt(payload, int(off+frameHeaderSize)) {
		return 0, nil, noFrame(pos, "length past end of buffer")
	}
	if reason := h.check(payload); reason != "" {
		return 0, nil, noFrame(pos, reason)
	}
	return h.typ, payload, nil
}

// readFrameFile reads the frame at pos from seg, whose data ends at end.
func readFrameFile(seg *segment, pos, end Pos) (RecordType, []byte, error) {
	if pos+frameHeaderSize > end {
		return 0, nil, noFrame(pos, "segment too short")
	}
	off := segmentHeaderSize + int64(pos-seg.start)
	var hb [frameHeaderSize]byte
	if err := readFull(seg, hb[:], off); err != nil {
		return 0, nil, err
	}
	h := parseFrameHeader(hb[:])
	if pos+frameSize(int(h.length)) > end {
		return 0, nil, noFrame(pos, "length past end of segment")
	}
	payload := make([]byte, h.length)
	if err := readFull(seg, payload, off+frameHeaderSize); err != nil {
		return 0, nil, err
	}
	if reason := h.check(payload); reason != "" {
		return 0, nil, fmt.Errorf("wal: read at pos %d in %s at offset %d: %s", pos, seg.name(), off, reason)
	}
	return h.typ, payload, nil
}

func readFull(seg *segment, p []byte, off int64) error {
	n, err := seg.f.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("wal: read %s at offset %d: %w", seg.path, off, err)
}

// shrinkStep and shrinkPause pace the truncation of a released segment:
// freeing 64 MiB of blocks at once stalls the filesystem journal, and with
// it the next WAL fsync, for a hundred milliseconds on ext4; in steps, the
// fsyncs of new appends slip in between.
const (
	shrinkStep  = 4 << 20
	shrinkPause = time.Millisecond
)

// shrink truncates a released segment to nothing in steps before it is
// removed. Failures are left to the removal that follows.
func shrink(seg *segment) {
	size, err := seg.f.Size()
	for err == nil && size > shrinkStep {
		size -= shrinkStep
		err = seg.f.Truncate(size)
		time.Sleep(shrinkPause)
	}
}

func noFrame(pos Pos, why string) error {
	return fmt.Errorf("wal: read at pos %d: no frame starts there (%s)", pos, why)
}

// Release says everything before upTo is no longer needed (it is in object
// storage). Whole segments that end at or before upTo are deleted, oldest
// first, each deletion made durable; the active segment never is. A call
// with an upTo not above an earlier one is a no-op. An upTo beyond Head is
// an error.
func (w *WAL) Release(upTo Pos) error {
	w.releaseMu.Lock()
	defer w.releaseMu.Unlock()
	drop, err := w.detachReleased(upTo)
	if err != nil {
		return err
	}
	for _, seg := range drop {
		shrink(seg)
		if err := seg.f.Close(); err != nil {
			w.opts.Logger.Warn("wal: close released segment", "file", seg.path, "err", err)
		}
	}
	for _, seg := range drop {
		// Stop at the first failure: what is left on disk stays contiguous.
		if err := w.sync.removeSegment(seg.path); err != nil {
			return err
		}
	}
	return nil
}

// detachReleased takes the segments that upTo releases out of the list.
func (w *WAL) detachReleased(upTo Pos) ([]*segment, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.closing:
		return nil, ErrClosed
	case upTo > w.head:
		return nil, fmt.Errorf("wal: release up to pos %d: beyond head %d", upTo, w.head)
	case upTo <= w.released:
		return nil, nil
	}
	w.released = upTo
	n := 0
	for n+1 < len(w.segs) && w.segs[n+1].start <= upTo {
		n++
	}
	drop := slices.Clone(w.segs[:n])
	w.segs = slices.Clone(w.segs[n:])
	return drop, nil
}
