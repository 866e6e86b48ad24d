package wal

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// damageLog is a closed log of 40 frames over several 1000-byte segments,
// ready to be damaged.
type damageLog struct {
	*testLog
	frames []frame
	starts []Pos
}

func newDamageLog(t *testing.T) *damageLog {
	tl := newTestLog(t, 1000)
	w, _ := tl.open()
	frames := appendN(t, w, 0, 40, func(i int) int { return 1 + (i*37)%200 })
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	d := &damageLog{testLog: tl, frames: frames, starts: tl.segments()}
	if len(d.starts) < 4 {
		t.Fatalf("want at least 4 segments, got %d", len(d.starts))
	}
	return d
}

// where returns the start of the segment holding frame i and its offset.
func (d *damageLog) where(i int) (Pos, int64) {
	pos := d.frames[i].pos
	k, _ := slices.BinarySearch(d.starts, pos+1)
	start := d.starts[k-1]
	return start, segmentHeaderSize + int64(pos-start)
}

// lastInSegment returns the index of the last frame of segment k.
func (d *damageLog) lastInSegment(k int) int {
	i, _ := slices.BinarySearchFunc(d.frames, d.starts[k+1], func(f frame, p Pos) int { return int(f.pos) - int(p) })
	return i - 1
}

func (d *damageLog) edit(t *testing.T, start Pos, fn func([]byte) []byte) {
	t.Helper()
	b, err := d.fs.Bytes(d.path(start))
	if err != nil {
		t.Fatal(err)
	}
	d.fs.SetBytes(d.path(start), fn(b))
}

func TestTornTail(t *testing.T) {
	t.Parallel()
	last := 39
	for _, tc := range []struct {
		name string
		keep int // frames expected back
		fn   func(b []byte, off int64) []byte
	}{
		{"short frame", last, func(b []byte, _ int64) []byte { return b[:len(b)-3] }},
		{"partial header", last, func(b []byte, off int64) []byte { return b[:off+5] }},
		{"zeros appended", last + 1, func(b []byte, _ int64) []byte { return append(b, make([]byte, 100)...) }},
		{"zeroed last frame", last, func(b []byte, off int64) []byte { clear(b[off:]); return b }},
		{"bad CRC at EOF", last, func(b []byte, _ int64) []byte { b[len(b)-1] ^= 0x40; return b }},
		{"bad CRC then zeros", last, func(b []byte, _ int64) []byte {
			b[len(b)-1] ^= 0x40
			return append(b, make([]byte, 50)...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := newDamageLog(t)
			start, off := d.where(last)
			// The last flush was written but its fsync never returned, so
			// its commit is not there: what follows the commit before it
			// was never acknowledged.
			d.edit(t, start, func(b []byte) []byte { return tc.fn(dropFinalCommit(t, b), off) })
			w, got := d.open()
			sameFrames(t, got, d.frames[:tc.keep])
			logs := d.logs.String()
			if !strings.Contains(logs, "torn tail") || !strings.Contains(logs, segmentName(start)) {
				t.Fatalf("truncation not logged with the file name:\n%s", logs)
			}
			end := segmentHeaderSize + int64(d.frames[tc.keep-1].end-start)
			if size, _ := d.fs.Stat(d.path(start)); size != end && size != end+commitFrameSize {
				t.Fatalf("segment is %d bytes after truncation", size)
			}
			checkContinues(t, d.testLog, w, got)
		})
	}
}

// dropFinalCommit cuts the flush commit that ends a closed log's last
// segment.
func dropFinalCommit(t *testing.T, b []byte) []byte {
	t.Helper()
	end := len(b) - commitFrameSize
	if end < segmentHeaderSize || parseFrameHeader(b[end:]).typ != commitType {
		t.Fatal("the last segment does not end with a flush commit")
	}
	return b[:end]
}

// corruptionCase damages a log and says where: the frame index the log
// must be cut at, and the segment and offset the error must name.
type corruptionCase struct {
	name   string
	damage func(t *testing.T, d *damageLog) (cut int, start Pos, off int64)
}

var corruptionCases = []corruptionCase{
	{"bad CRC mid last segment", func(t *testing.T, d *damageLog) (int, Pos, int64) {
		start, off := d.where(len(d.frames) - 3)
		d.edit(t, start, func(b []byte) []byte { b[off+frameHeaderSize] ^= 1; return b })
		return len(d.frames) - 3, start, off
	}},
	{"bad CRC at end of non-last segment", func(t *testing.T, d *damageLog) (int, Pos, int64) {
		i := d.lastInSegment(1)
		start, off := d.where(i)
		end := off + int64(frameSize(len(d.frames[i].payload)))
		d.edit(t, start, func(b []byte) []byte { b[end-1] ^= 1; return b })
		return i, start, off
	}},
	{"short non-last segment", func(t *testing.T, d *damageLog) (int, Pos, int64) {
		i := d.lastInSegment(0)
		start, off := d.where(i)
		end := off + int64(frameSize(len(d.frames[i].payload)))
		d.edit(t, start, func(b []byte) []byte { return b[:end-2] })
		return i, start, off
	}},
	{"zeroed header followed by data", func(t *testing.T, d *damageLog) (int, Pos, int64) {
		start, off := d.where(len(d.frames) - 2)
		d.edit(t, start, func(b []byte) []byte { clear(b[off : off+frameHeaderSize]); return b })
		return len(d.frames) - 2, start, off
	}},
	{"bad segment magic", func(t *testing.T, d *damageLog) (int, Pos, int64) {
		d.edit(t, d.starts[2], func(b []byte) []byte { b[0] = 'X'; return b })
		return d.firstIn(2), d.starts[2], 0
	}},
	{"missing segment", func(t *testing.T, d *damageLog) (int, Pos, int64) {
		if err := d.fs.Remove(d.path(d.starts[1])); err != nil {
			t.Fatal(err)
		}
		return d.firstIn(1), d.starts[2], 0
	}},
}

func TestCorruption(t *testing.T) {
	t.Parallel()
	for _, tc := range corruptionCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := newDamageLog(t)
			cut, start, off := tc.damage(t, d)
			_, _, err := d.openErr()
			var ce *CorruptionError
			if !errors.As(err, &ce) || ce.File != d.path(start) || ce.Offset != off || !IsCorruption(err) {
				t.Fatalf("Open: %v; want corruption in %s at %d", err, segmentName(start), off)
			}
			if !strings.Contains(err.Error(), segmentName(start)) {
				t.Fatalf("error does not name the file: %v", err)
			}
			d.opts.Repair = true
			var dropped []frame
			d.opts.OnRepairDrop = func(pos Pos, typ RecordType, p []byte) error {
				dropped = append(dropped, frame{pos, pos + frameSize(len(p)), typ, slices.Clone(p)})
				return nil
			}
			w, got := d.open()
			sameFrames(t, got, d.frames[:cut])
			checkDropped(t, dropped, d.frames[cut:])
			d.opts.OnRepairDrop = nil
			if !strings.Contains(d.logs.String(), "REPAIR") {
				t.Fatalf("repair not logged:\n%s", d.logs)
			}
			d.opts.Repair = false
			checkContinues(t, d.testLog, w, got)
		})
	}
}

// checkDropped fails unless what a repair reported dropped is some of the
// frames cut off, in order, none twice, and at least the last one (every
// case here leaves the frames after the damage intact).
func checkDropped(t *testing.T, dropped, cut []frame) {
	t.Helper()
	i := 0
	for _, f := range dropped {
		for i < len(cut) && cut[i].pos != f.pos {
			i++
		}
		if i == len(cut) {
			t.Fatalf("repair reported a frame at %d that was not cut off, or out of order", f.pos)
		}
		if err := diffFrame(f, cut[i]); err != nil {
			t.Fatalf("repair reported frame at %d: %v", f.pos, err)
		}
		i++
	}
	if len(dropped) == 0 || dropped[len(dropped)-1].pos != cut[len(cut)-1].pos {
		t.Fatalf("repair reported %d frames, not the last of the %d cut off", len(dropped), len(cut))
	}
}

// firstIn returns the index of the first frame of segment k.
func (d *damageLog) firstIn(k int) int { return d.lastInSegment(k-1) + 1 }

func TestLeftoverTmpRemoved(t *testing.T) {
	t.Parallel()
	d := newDamageLog(t)
	tmp := d.path(d.frames[39].end) + tmpExt
	d.fs.SetBytes(tmp, appendSegmentHeader(nil, d.frames[39].end))
	_, got := d.open()
	sameFrames(t, got, d.frames)
	if _, err := d.fs.Stat(tmp); err == nil {
		t.Fatal("leftover .tmp file still there")
	}
}
