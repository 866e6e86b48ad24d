package wal

import (
	"strings"
	"testing"
)

// v1Segment is a version 1 segment (no flush commits) of frames from start.
func v1Segment(start Pos, frames []frame) []byte {
	b := appendSegmentHeaderV(nil, start, formatVersionV1)
	for _, f := range frames {
		b = append(b, encodeFrame(f.typ, f.payload)...)
	}
	return b
}

// TestReadsVersion1 opens a log left by a release that wrote version 1:
// its frames replay, its torn tail is judged by shape as that release did,
// and new frames go into a fresh version 2 segment, never into the old one.
func TestReadsVersion1(t *testing.T) {
	t.Parallel()
	tl := newTestLog(t, 1<<20)
	var frames []frame
	var pos Pos
	for i := range 5 {
		p := payload(i, 50+i)
		frames = append(frames, frame{pos, pos + frameSize(len(p)), RecordType(1 + i), p})
		pos += frameSize(len(p))
	}
	old := v1Segment(0, frames)
	old = old[:len(old)-3] // the last frame is torn
	tl.fs.SetBytes(tl.path(0), old)

	w, got := tl.open()
	sameFrames(t, got, frames[:4])
	if logs := tl.logs.String(); !strings.Contains(logs, "torn tail") {
		t.Fatalf("torn version 1 tail not logged:\n%s", logs)
	}
	if segs := tl.segments(); len(segs) != 2 || segs[1] != frames[3].end {
		t.Fatalf("segments %v: want the version 1 one and a new one at %d", segs, frames[3].end)
	}
	next := appendN(t, w, 10, 3, func(int) int { return 20 })
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := tl.fs.Bytes(tl.path(frames[3].end))
	if err != nil || b[4] != formatVersion {
		t.Fatalf("new segment: %v, version byte %d", err, b[4])
	}
	if b, _ := tl.fs.Bytes(tl.path(0)); len(b) != segmentHeaderSize+int(frames[3].end) {
		t.Fatalf("the version 1 segment changed: %d bytes", len(b))
	}
	_, got = tl.open()
	sameFrames(t, got, append(frames[:4:4], next...))
}

// TestEmptyVersion1TailReplaced: a version 1 last segment with no frames
// starts where the new version 2 segment must, so the new one replaces its
// file; a later Release must not delete the live segment by that name.
func TestEmptyVersion1TailReplaced(t *testing.T) {
	t.Parallel()
	tl := newTestLog(t, 1<<20)
	tl.fs.SetBytes(tl.path(0), v1Segment(0, nil))
	w, got := tl.open()
	sameFrames(t, got, nil)
	first := appendN(t, w, 0, 2, func(int) int { return 30 })
	if err := w.Release(first[0].end); err != nil {
		t.Fatal(err)
	}
	second := appendN(t, w, 2, 2, func(int) int { return 30 })
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, got = tl.open()
	sameFrames(t, got, append(first, second...)) // Release frees whole segments only
}
