package wal

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"testing"
)

// corruptLog is a version 2 segment of three flushes: two committed, and a
// last one whose fsync never returned (no commit).
type corruptLog struct {
	file    []byte
	frames  []frame
	offs    []int64 // file offset of each frame
	units   []int64 // file offset of each frame and commit, and the file size
	commits []int64 // file offset of each commit
}

func newCorruptLog() *corruptLog {
	c := &corruptLog{file: appendSegmentHeader(nil, fuzzStart)}
	n := 0
	for flush, count := range []int{4, 3, 3} {
		first := c.pos()
		for range count {
			p := payload(n, 40+n*37%300)
			c.offs = append(c.offs, int64(len(c.file)))
			c.units = append(c.units, int64(len(c.file)))
			c.frames = append(c.frames, frame{c.pos(), c.pos() + frameSize(len(p)), RecordType(1 + n), p})
			c.file = append(c.file, encodeFrame(RecordType(1+n), p)...)
			n++
		}
		if flush < 2 {
			c.commits = append(c.commits, int64(len(c.file)))
			c.units = append(c.units, int64(len(c.file)))
			c.file = append(c.file, commitFrame(first, c.pos())...)
		}
	}
	c.units = append(c.units, int64(len(c.file)))
	return c
}

// commitAfter reports whether an intact commit follows offset first in file.
func (c *corruptLog) commitAfter(file []byte, first int64) bool {
	for _, at := range c.commits {
		end := at + commitFrameSize
		if at > first && bytes.Equal(file[at:end], c.file[at:end]) {
			return true
		}
	}
	return false
}

// unitAt returns the file offset of the frame or commit holding byte off.
func (c *corruptLog) unitAt(off int64) int64 {
	for i := 1; i < len(c.units); i++ {
		if c.units[i] > off {
			return c.units[i-1]
		}
	}
	return c.units[len(c.units)-1]
}

func (c *corruptLog) pos() Pos { return fuzzStart + Pos(len(c.file)-segmentHeaderSize) }

// FuzzCorruptAt damages a valid log at a random offset (zeroing or
// flipping up to 4 KiB) and opens it. The oracle: damage followed by an
// intact flush commit is a *CorruptionError at the offset of the frame (or
// commit) it hit; other damage is a torn tail cut there; with Repair Open
// always succeeds. Whatever is replayed is exactly the frames before the
// damage: never a changed frame, never one after it.
func FuzzCorruptAt(f *testing.F) {
	c := newCorruptLog()
	for _, off := range []uint32{0, 20, uint32(c.offs[2]) + 30, uint32(c.commits[1]), uint32(c.commits[1]) + 30, uint32(len(c.file)) - 2} {
		f.Add(off, uint16(4096), true, false)
		f.Add(off, uint16(1), false, true)
	}
	f.Fuzz(func(t *testing.T, off uint32, n uint16, zero, repair bool) {
		file := bytes.Clone(c.file)
		from := segmentHeaderSize + int64(off)%int64(len(file)-segmentHeaderSize)
		to := min(from+1+int64(n)%4096, int64(len(file)))
		for i := from; i < to; i++ {
			if zero {
				file[i] = 0
			} else {
				file[i] ^= 0xff
			}
		}
		first := int64(len(file)) // first changed byte
		for i := from; i < to; i++ {
			if file[i] != c.file[i] {
				first = i
				break
			}
		}
		c.check(t, file, first, repair)
	})
}

// check opens file, damaged first at offset first, and applies the oracle.
func (c *corruptLog) check(t *testing.T, file []byte, first int64, repair bool) {
	mem := NewMemFS()
	path := "/wal/" + segmentName(fuzzStart)
	mem.SetBytes(path, file)
	var got, dropped []frame
	w, err := Open(Options{Dir: "/wal", FS: boundsFS{mem, t}, Repair: repair,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnRepairDrop: func(pos Pos, typ RecordType, p []byte) error {
			dropped = append(dropped, frame{pos, pos + frameSize(len(p)), typ, bytes.Clone(p)})
			return nil
		}},
		func(pos Pos, typ RecordType, p []byte) error {
			got = append(got, frame{pos, pos + frameSize(len(p)), typ, bytes.Clone(p)})
			return nil
		})
	hit := len(c.frames) // index of the first frame at or after the damage
	for i, off := range c.offs {
		if off+int64(frameSize(len(c.frames[i].payload))) > first {
			hit = i
			break
		}
	}
	if w != nil {
		defer w.Close()
	}
	var ce *CorruptionError
	switch {
	case c.commitAfter(file, first) && !repair:
		if !errors.As(err, &ce) || ce.File != path || ce.Offset != c.unitAt(first) {
			t.Fatalf("damage at %d before an intact commit: Open returned %v, want corruption at the frame it hit", first, err)
		}
		return
	case err != nil:
		t.Fatalf("damage at %d, no intact commit after it (repair %v): Open: %v", first, repair, err)
	}
	sameFrames(t, got, c.frames[:hit])
	j := hit // what a repair reports dropped is frames after the cut, in order
	for _, f := range dropped {
		for j < len(c.frames) && c.frames[j].pos != f.pos {
			j++
		}
		if j == len(c.frames) || diffFrame(f, c.frames[j]) != nil {
			t.Fatalf("repair reported a frame at %d that is not one cut off", f.pos)
		}
		j++
	}
}
