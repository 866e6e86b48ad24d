package wal

import (
	"bufio"
	"fmt"
	"io"
)

// replayFunc receives one recovered frame; see Open.
type replayFunc func(pos Pos, typ RecordType, payload []byte) error

// badSpot is where and why a segment stops being valid.
type badSpot struct {
	offset int64  // file offset of the bad header or frame
	reason string // for logs and CorruptionError
	// torn says the damage looks like an interrupted, never acknowledged
	// write. Only version 1 segments, which have no flush commits, rely on
	// this guess, and only at the tail of the last segment.
	torn bool
}

// scanResult is what scanning one segment found.
type scanResult struct {
	size int64    // file size
	end  int64    // file offset just past the last valid frame
	bad  *badSpot // nil when the file is valid to its end
}

// scanSegment checks seg's header, records its version, and hands every
// valid frame but flush commits to replay (which may be nil), stopping at
// the first bad spot. It never reads past the file's size. Errors are I/O
// or replay errors, not damage.
func scanSegment(seg *segment, replay replayFunc) (scanResult, error) {
	size, err := seg.f.Size()
	if err != nil {
		return scanResult{}, fmt.Errorf("wal: stat segment %s: %w", seg.path, err)
	}
	hdr := make([]byte, min(size, segmentHeaderSize))
	if _, err := seg.f.ReadAt(hdr, 0); err != nil && err != io.EOF {
		return scanResult{size: size}, fmt.Errorf("wal: read segment header %s: %w", seg.path, err)
	}
	if reason := checkSegmentHeader(hdr, seg.start); reason != "" {
		return scanResult{size: size, bad: &badSpot{offset: 0, reason: reason}}, nil
	}
	seg.version = hdr[4]
	return scanFrames(seg, segmentHeaderSize, size, replay)
}

// scanFrames scans seg's frames from file offset from (a frame boundary)
// to size, as scanSegment does.
func scanFrames(seg *segment, from, size int64, replay replayFunc) (scanResult, error) {
	res := scanResult{size: size}
	sc := &frameScanner{
		r:       bufio.NewReaderSize(io.NewSectionReader(seg.f, from, size-from), 64<<10),
		size:    size,
		off:     from,
		start:   seg.start,
		version: seg.version,
	}
	for sc.off < size && res.bad == nil {
		at := sc.off
		h, payload, bad, err := sc.next()
		if err != nil {
			return res, fmt.Errorf("wal: read segment %s at offset %d: %w", seg.path, at, err)
		}
		res.bad = bad
		if bad == nil && h.typ != commitType && replay != nil {
			pos := seg.start + Pos(at-segmentHeaderSize)
			if err := replay(pos, h.typ, payload); err != nil {
				return res, fmt.Errorf("wal: replay of frame at pos %d: %w", pos, err)
			}
		}
	}
	res.end = sc.off
	return res, nil
}

// frameScanner reads frames sequentially from a segment's body.
type frameScanner struct {
	r       *bufio.Reader
	size    int64  // file size: nothing at or past it is read
	off     int64  // file offset of the next frame
	start   Pos    // the segment's start
	version byte   // the segment's format version
	buf     []byte // payload buffer, reused
}

// next reads the frame at off. On a bad spot it returns it and leaves off
// at the bad frame; otherwise it advances off past the frame. A flush
// commit comes back with type commitType.
func (s *frameScanner) next() (frameHeader, []byte, *badSpot, error) {
	at, rest := s.off, s.size-s.off
	if rest < frameHeaderSize {
		return frameHeader{}, nil, &badSpot{at, "partial frame header at end of file", true}, nil
	}
	var hb [frameHeaderSize]byte
	if _, err := io.ReadFull(s.r, hb[:]); err != nil {
		return frameHeader{}, nil, nil, err
	}
	h := parseFrameHeader(hb[:])
	rest -= frameHeaderSize
	if h.isZero() {
		return s.zeroHeader(at, rest)
	}
	if int64(h.length) > rest {
		reason := fmt.Sprintf("frame length %d runs past end of file (%d bytes left)", h.length, rest)
		return h, nil, &badSpot{at, reason, true}, nil
	}
	payload, err := s.read(int(h.length))
	if err != nil {
		return h, nil, nil, err
	}
	if reason := s.check(h, payload, at); reason != "" {
		zero, err := s.restIsZero(rest - int64(h.length))
		return h, nil, &badSpot{at, reason, zero}, err
	}
	s.off += frameHeaderSize + int64(h.length)
	return h, payload, nil, nil
}

// check returns why the frame at file offset at is invalid, or "".
func (s *frameScanner) check(h frameHeader, payload []byte, at int64) string {
	if h.typ != commitType || s.version == formatVersionV1 {
		return h.check(payload)
	}
	if !isCommit(h, payload, s.start+Pos(at-segmentHeaderSize)) {
		return "bad flush commit"
	}
	return ""
}

// zeroHeader classifies a frame header of nine zero bytes: the start of a
// zeroed tail if only zeros follow, corruption otherwise.
func (s *frameScanner) zeroHeader(at, rest int64) (frameHeader, []byte, *badSpot, error) {
	zero, err := s.restIsZero(rest)
	if err != nil || zero {
		return frameHeader{}, nil, &badSpot{at, "zeroed tail", true}, err
	}
	return frameHeader{}, nil, &badSpot{at, "zeroed frame header followed by data", false}, nil
}

// read returns the next n bytes in the reused buffer.
func (s *frameScanner) read(n int) ([]byte, error) {
	if cap(s.buf) < n {
		s.buf = make([]byte, n)
	}
	b := s.buf[:n]
	_, err := io.ReadFull(s.r, b)
	return b, err
}

// restIsZero reads the next n bytes and reports whether all are zero.
func (s *frameScanner) restIsZero(n int64) (bool, error) {
	var chunk [4096]byte
	for n > 0 {
		b := chunk[:min(n, int64(len(chunk)))]
		if _, err := io.ReadFull(s.r, b); err != nil {
			return false, err
		}
		for _, c := range b {
			if c != 0 {
				return false, nil
			}
		}
		n -= int64(len(b))
	}
	return true, nil
}
