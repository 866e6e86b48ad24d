package wal

import (
	"context"
	"errors"
	"testing"
	"time"
)

// variedSize gives frames from empty to bigger than a 1000-byte segment.
func variedSize(i int) int {
	if i%97 == 13 {
		return 2500 // larger than SegmentBytes: a segment of its own
	}
	return (i * 37) % 400
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	backends(t, 1000, func(t *testing.T, tl *testLog) {
		w, got := tl.open()
		if len(got) != 0 {
			t.Fatalf("fresh log replayed %d frames", len(got))
		}
		want := appendN(t, w, 0, 300, variedSize)
		syncOrFatal(t, w)
		readAll(t, w, want)
		st := w.Stats()
		if st.Segments < 5 || st.Head < want[len(want)-1].end+commitFrameSize || st.Durable != st.Head || st.Appends != 300 {
			t.Fatalf("stats after appends: %+v", st)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}

		w, got = tl.open()
		sameFrames(t, got, want)
		readAll(t, w, want)
		head := w.Head()
		more := appendN(t, w, 300, 20, variedSize)
		if more[0].pos != head || head < want[len(want)-1].end {
			t.Fatalf("first append after reopen at %d, want the head %d, past %d", more[0].pos, head, want[len(want)-1].end)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		_, got = tl.open()
		sameFrames(t, got, append(want, more...))
	})
}

// TestSegmentRollRule checks where segments begin: a segment is rolled only
// when the next frame would push a non-empty segment past SegmentBytes.
// Flush commits take logical space in a segment like frames do, and how
// many land in a segment depends on when the flusher happened to run, so
// the sizes are measured from segment starts and frame ends, never by
// summing the appended frames.
func TestSegmentRollRule(t *testing.T) {
	t.Parallel()
	const limit = 1000
	tl := newTestLog(t, limit)
	w, _ := tl.open()
	frames := appendN(t, w, 0, 300, variedSize)
	syncOrFatal(t, w)
	starts := tl.segments()
	if starts[0] != 0 {
		t.Fatalf("first segment starts at %d", starts[0])
	}
	next := 0 // index of the first frame of the current segment
	for i, start := range starts {
		if frames[next].pos != start {
			t.Fatalf("segment %d starts at %d, not at a frame start (%d)", i, start, frames[next].pos)
		}
		n := next
		for n < len(frames) && (i+1 == len(starts) || frames[n].pos < starts[i+1]) {
			n++
		}
		size := int64(frames[n-1].end - start) // with the commits between its frames
		if size > limit && n-next > 1 {
			t.Fatalf("segment %d holds %d frames in %d bytes", i, n-next, size)
		}
		if n == len(frames) {
			if i+1 != len(starts) {
				t.Fatalf("%d segments after the last frame's", len(starts)-i-1)
			}
			break
		}
		// The segment ends where the next begins: after its last frame and,
		// when a flush ended there, that flush's commit.
		if tail := starts[i+1] - frames[n-1].end; tail != 0 && tail != commitFrameSize {
			t.Fatalf("segment %d has %d bytes after its last frame", i, tail)
		}
		if withNext := int64(frames[n].end - start); withNext <= limit {
			t.Fatalf("segment %d rolled early: %d bytes with the next frame, limit %d", i, withNext, limit)
		}
		next = n
	}
}

func TestReadAtPendingAndInflight(t *testing.T) {
	t.Parallel()
	tl, h := newHookLog(t, 1<<20)
	w, _ := tl.open()
	g := armWriteGate(h)
	inflight := appendN(t, w, 0, 1, func(int) int { return 50 })
	<-g.entered // the flusher holds the first frame and is blocked writing it
	pending := appendN(t, w, 1, 3, func(int) int { return 70 })
	if st := w.Stats(); st.Durable != 0 || st.Pending != int64(pending[2].end) {
		t.Fatalf("stats while flusher blocked: %+v", st)
	}
	all := append(inflight, pending...)
	readAll(t, w, all)
	if _, _, err := w.ReadAt(inflight[0].pos + 1); err == nil {
		t.Fatal("ReadAt in the middle of a buffered frame succeeded")
	}
	g.release()
	syncOrFatal(t, w)
	readAll(t, w, all)
	if _, _, err := w.ReadAt(all[1].pos + 3); err == nil {
		t.Fatal("ReadAt in the middle of a written frame succeeded")
	}
}

func TestWaitCanceled(t *testing.T) {
	t.Parallel()
	tl, h := newHookLog(t, 1<<20)
	w, _ := tl.open()
	g := armWriteGate(h)
	frames := appendN(t, w, 0, 1, func(int) int { return 10 })
	<-g.entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.Wait(ctx, frames[0].end); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with canceled ctx: %v", err)
	}
	g.release()
	if err := w.Wait(context.Background(), frames[0].end); err != nil {
		t.Fatal(err)
	}
}

func TestAppendRejectsAndClosed(t *testing.T) {
	t.Parallel()
	tl := newTestLog(t, 1<<20)
	w, _ := tl.open()
	if _, _, err := w.Append(0, []byte("x")); err == nil {
		t.Fatal("Append with type 0 succeeded")
	}
	frames := appendN(t, w, 0, 3, func(int) int { return 5 })
	ctx := context.Background()
	if err := w.Wait(ctx, frames[2].end+100); err == nil {
		t.Fatal("Wait beyond head succeeded")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := w.Wait(ctx, frames[2].end); err != nil {
		t.Fatalf("Wait for a frame flushed by Close: %v", err)
	}
	if _, _, err := w.Append(1, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v", err)
	}
	if err := w.Wait(ctx, w.Head()+1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Wait after Close: %v", err)
	}
	if _, _, err := w.ReadAt(0); !errors.Is(err, ErrClosed) {
		t.Fatalf("ReadAt after Close: %v", err)
	}
	if err := w.Release(1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Release after Close: %v", err)
	}
}

func TestOptionsValidation(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{
		{FS: NewMemFS()},
		{Dir: "/w", FS: NewMemFS(), SegmentBytes: -1},
		{Dir: "/w", FS: NewMemFS(), SlowSync: -1},
	} {
		if _, err := Open(o, nil); err == nil {
			t.Fatalf("Open(%+v) succeeded", o)
		}
	}
}

func TestOnSyncHook(t *testing.T) {
	t.Parallel()
	tl := newTestLog(t, 1000)
	var calls, bytes int // only the flusher calls OnSync; read after Close
	tl.opts.OnSync = func(_ time.Duration, n int) { calls++; bytes += n }
	w, _ := tl.open()
	appendN(t, w, 0, 50, variedSize)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st := w.Stats()
	// Close fsyncs the last flush commit itself, outside the hook.
	if uint64(calls) != st.Syncs || uint64(bytes) != st.SyncedBytes || uint64(bytes) != uint64(st.Head)-commitFrameSize {
		t.Fatalf("OnSync saw %d calls, %d bytes; stats %+v", calls, bytes, st)
	}
}
