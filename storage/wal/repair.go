package wal

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
)

// What a repair drops is reported as well as it can be: the byte count and
// the files, and every frame in the dropped part that is still intact goes
// to Options.OnRepairDrop, so that the caller, who knows what payloads
// mean, can name what was lost. Past the damage, frame boundaries are found
// again from the damaged frame's length field or, failing that, from the
// next offset where a valid frame starts.

// droppedBytes is how many bytes a cut at off in seg drops, later segments
// included. It is for the log only, so stat errors count as zero.
func (r *recoverer) droppedBytes(seg *segment, off int64, later []Pos) int64 {
	var n int64
	if size, err := r.fs.Stat(seg.path); err == nil {
		n += size - max(off, segmentHeaderSize)
	}
	for _, start := range later {
		if size, err := r.fs.Stat(filepath.Join(r.dir, segmentName(start))); err == nil {
			n += size - segmentHeaderSize
		}
	}
	return max(n, 0)
}

// segmentNames lists the file names of the segments starting at starts.
func segmentNames(starts []Pos) []string {
	names := make([]string, len(starts))
	for i, s := range starts {
		names[i] = segmentName(s)
	}
	return names
}

// reportDropped hands the intact frames after off in seg, and those of the
// later segments, to the drop callback.
func (r *recoverer) reportDropped(seg *segment, off int64, later []Pos) error {
	if r.drop == nil {
		return nil
	}
	if seg.f != nil && off >= segmentHeaderSize {
		if err := r.dropFrames(seg, off); err != nil {
			return err
		}
	}
	for _, start := range later {
		if err := r.dropSegment(start); err != nil {
			return err
		}
	}
	return nil
}

// dropSegment reports the intact frames of a whole later segment.
func (r *recoverer) dropSegment(start Pos) error {
	path := filepath.Join(r.dir, segmentName(start))
	f, err := r.fs.Open(path)
	if err != nil {
		return fmt.Errorf("wal: open segment %s: %w", path, err)
	}
	defer f.Close()
	seg := &segment{start: start, path: path, f: f}
	res, err := scanSegment(seg, r.drop)
	if err != nil || res.bad == nil || res.bad.offset < segmentHeaderSize {
		return err
	}
	return r.dropFrames(seg, res.bad.offset)
}

// dropFrames reports the intact frames of seg after the damage at bad.
// Each round resumes strictly after the last damage, so it ends.
func (r *recoverer) dropFrames(seg *segment, bad int64) error {
	size, err := seg.f.Size()
	if err != nil {
		return fmt.Errorf("wal: stat segment %s: %w", seg.path, err)
	}
	for bad < size {
		next, err := resync(seg, bad, size)
		if err != nil || next < 0 || next >= size {
			return err
		}
		res, err := scanFrames(seg, next, size, r.drop)
		if err != nil || res.bad == nil {
			return err
		}
		bad = res.bad.offset
	}
	return nil
}

// resync returns the file offset of the first frame boundary found after
// the damaged frame at bad, or -1.
func resync(seg *segment, bad, size int64) (int64, error) {
	var hb [frameHeaderSize]byte
	if bad+frameHeaderSize <= size {
		if err := readFull(seg, hb[:], bad); err != nil {
			return -1, err
		}
		h := parseFrameHeader(hb[:])
		next := bad + frameHeaderSize + int64(h.length)
		if !h.isZero() && next <= size {
			ok, err := frameAt(seg, next, size)
			if ok || err != nil {
				return next, err
			}
		}
	}
	return findFrame(seg, bad, size)
}

// findFrame returns the file offset of the first valid frame (or commit)
// that starts after file offset from, or -1. It reads the rest of the
// segment at once: it serves only a repair, which an operator runs once.
func findFrame(seg *segment, from, size int64) (int64, error) {
	if from+1 >= size {
		return -1, nil
	}
	b := make([]byte, size-from-1)
	if err := readFull(seg, b, from+1); err != nil {
		return -1, err
	}
	for i := 0; i+frameHeaderSize <= len(b); i++ {
		h := parseFrameHeader(b[i:])
		end := i + frameHeaderSize + int(h.length)
		if h.isZero() || int64(h.length) > int64(len(b)-i-frameHeaderSize) {
			continue
		}
		at := seg.start + Pos(from+1+int64(i)-segmentHeaderSize)
		payload := b[i+frameHeaderSize : end]
		if (h.typ != commitType && h.check(payload) == "") ||
			(seg.version == formatVersion && isCommit(h, payload, at)) {
			return from + 1 + int64(i), nil
		}
	}
	return -1, nil
}

// frameAt reports whether a valid frame starts at file offset off of seg,
// or off is the end of the file.
func frameAt(seg *segment, off, size int64) (bool, error) {
	if off == size {
		return true, nil
	}
	sc := &frameScanner{
		r:    bufio.NewReader(io.NewSectionReader(seg.f, off, size-off)),
		size: size, off: off, start: seg.start, version: seg.version,
	}
	_, _, bad, err := sc.next()
	return err == nil && bad == nil, err
}
