package wal

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
)

// frame is one appended or replayed frame, as tests remember it.
type frame struct {
	pos     Pos
	end     Pos
	typ     RecordType
	payload []byte
}

// logBuffer collects log output so tests can check what was reported.
type logBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testLog is a WAL on a MemFS (or the real FS), reopenable, with its log
// output captured.
type testLog struct {
	t    testing.TB
	fs   *MemFS // nil on the real filesystem
	opts Options
	logs *logBuffer
}

func newTestLog(t testing.TB, segmentBytes int64) *testLog {
	fs := NewMemFS()
	tl := newTestLogOn(t, fs, "/data/wal", segmentBytes)
	tl.fs = fs
	return tl
}

func newTestLogOn(t testing.TB, fs FS, dir string, segmentBytes int64) *testLog {
	logs := &logBuffer{}
	return &testLog{t: t, logs: logs, opts: Options{
		Dir:          dir,
		FS:           fs,
		SegmentBytes: segmentBytes,
		Logger:       slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}}
}

// backends runs body once on MemFS and once on the real filesystem.
func backends(t *testing.T, segmentBytes int64, body func(t *testing.T, tl *testLog)) {
	t.Run("mem", func(t *testing.T) { body(t, newTestLog(t, segmentBytes)) })
	t.Run("os", func(t *testing.T) { body(t, newTestLogOn(t, OSFS{}, t.TempDir(), segmentBytes)) })
}

// openErr opens the log and returns what replay produced.
func (tl *testLog) openErr() (*WAL, []frame, error) {
	var got []frame
	w, err := Open(tl.opts, func(pos Pos, typ RecordType, payload []byte) error {
		got = append(got, frame{pos, pos + frameSize(len(payload)), typ, bytes.Clone(payload)})
		return nil
	})
	if err == nil {
		tl.t.Cleanup(func() { _ = w.Close() })
	}
	return w, got, err
}

func (tl *testLog) open() (*WAL, []frame) {
	tl.t.Helper()
	w, got, err := tl.openErr()
	if err != nil {
		tl.t.Fatalf("Open: %v\nlogs:\n%s", err, tl.logs)
	}
	return w, got
}

// path is the path of the segment starting at start.
func (tl *testLog) path(start Pos) string {
	return filepath.Join(tl.opts.Dir, segmentName(start))
}

// segments lists the segment starts on disk.
func (tl *testLog) segments() []Pos {
	tl.t.Helper()
	names, err := tl.opts.FS.ReadDir(tl.opts.Dir)
	if err != nil {
		tl.t.Fatal(err)
	}
	var starts []Pos
	for _, n := range names {
		if s, ok := parseSegmentName(n); ok {
			starts = append(starts, s)
		}
	}
	return starts
}

// payload returns a deterministic payload of n bytes for frame i.
func payload(i, n int) []byte {
	p := make([]byte, n)
	for j := range p {
		p[j] = byte(i*31 + j*7)
	}
	return p
}

// appendN appends n frames with sizes from size(i) and returns them.
func appendN(t testing.TB, w *WAL, first, n int, size func(i int) int) []frame {
	t.Helper()
	out := make([]frame, 0, n)
	for i := first; i < first+n; i++ {
		f := frame{typ: RecordType(1 + i%255), payload: payload(i, size(i))}
		start, end, err := w.Append(f.typ, f.payload)
		if err != nil {
			t.Fatalf("Append %d: %v", i, err)
		}
		f.pos, f.end = start, end
		out = append(out, f)
	}
	return out
}

func syncOrFatal(t testing.TB, w *WAL) {
	t.Helper()
	if err := w.Sync(context.Background()); err != nil {
		t.Fatalf("Sync: %v", err)
	}
}

// sameFrames fails unless got and want match exactly, in order.
func sameFrames(t testing.TB, got, want []frame) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d frames, want %d", len(got), len(want))
	}
	for i := range want {
		if err := diffFrame(got[i], want[i]); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
	}
}

func diffFrame(got, want frame) error {
	if got.pos != want.pos || got.end != want.end || got.typ != want.typ || !bytes.Equal(got.payload, want.payload) {
		return fmt.Errorf("got pos %d end %d type %d len %d, want pos %d end %d type %d len %d",
			got.pos, got.end, got.typ, len(got.payload), want.pos, want.end, want.typ, len(want.payload))
	}
	return nil
}

// readAll checks ReadAt for every frame.
func readAll(t testing.TB, w *WAL, frames []frame) {
	t.Helper()
	for i, f := range frames {
		typ, p, err := w.ReadAt(f.pos)
		if err != nil {
			t.Fatalf("ReadAt frame %d at %d: %v", i, f.pos, err)
		}
		if err := diffFrame(frame{f.pos, f.pos + frameSize(len(p)), typ, p}, f); err != nil {
			t.Fatalf("ReadAt frame %d: %v", i, err)
		}
	}
}
