package wal

import (
	"errors"
	"slices"
	"testing"
)

func TestRelease(t *testing.T) {
	t.Parallel()
	tl := newTestLog(t, 1000)
	w, _ := tl.open()
	frames := appendN(t, w, 0, 60, func(i int) int { return 1 + (i*53)%250 })
	syncOrFatal(t, w)
	starts := tl.segments()
	if len(starts) < 5 {
		t.Fatalf("want at least 5 segments, got %d", len(starts))
	}
	head := w.Head()

	// Inside segment 3: segments 0-2 end at or before it, 3 does not.
	release(t, w, starts[3]+1)
	if got := tl.segments(); !slices.Equal(got, starts[3:]) {
		t.Fatalf("segments after release: %v, want %v", got, starts[3:])
	}
	st := w.Stats()
	if st.Retained != int64(head-starts[3]) || st.Backlog != int64(head-starts[3]-1) || st.Segments != len(starts)-3 {
		t.Fatalf("stats after release: %+v", st)
	}
	if _, _, err := w.ReadAt(frames[0].pos); !errors.Is(err, ErrReleased) {
		t.Fatalf("ReadAt of a released frame: %v", err)
	}
	retained := framesFrom(frames, starts[3])
	readAll(t, w, retained)

	release(t, w, starts[1]) // smaller than before: no-op
	if got := tl.segments(); !slices.Equal(got, starts[3:]) {
		t.Fatalf("a smaller Release changed segments: %v", got)
	}
	if err := w.Release(head + 1); err == nil {
		t.Fatal("Release beyond head succeeded")
	}

	release(t, w, head) // everything, but the active segment stays
	active := starts[len(starts)-1]
	if got := tl.segments(); !slices.Equal(got, []Pos{active}) {
		t.Fatalf("segments after releasing everything: %v", got)
	}
	if st := w.Stats(); st.Retained != int64(head-active) || st.Backlog != 0 || st.Segments != 1 {
		t.Fatalf("stats after releasing everything: %+v", st)
	}

	// Deletions are durable: a crash does not bring segments back.
	tl.fs.Crash()
	_ = w.Close()
	w, got := tl.open()
	sameFrames(t, got, framesFrom(frames, active))
	readAll(t, w, got)
}

func release(t *testing.T, w *WAL, upTo Pos) {
	t.Helper()
	if err := w.Release(upTo); err != nil {
		t.Fatalf("Release(%d): %v", upTo, err)
	}
}

// framesFrom returns the frames at or after pos.
func framesFrom(frames []frame, pos Pos) []frame {
	i := slices.IndexFunc(frames, func(f frame) bool { return f.pos >= pos })
	return frames[i:]
}
