package wal

import (
	"sync/atomic"
	"testing"
)

// hookFS wraps a MemFS and runs hooks before file writes and syncs, so a
// test can stop the flusher at a known point without any timing.
type hookFS struct {
	*MemFS
	beforeWrite atomic.Pointer[func()]
	beforeSync  atomic.Pointer[func()]
}

func (h *hookFS) Create(name string) (File, error) {
	f, err := h.MemFS.Create(name)
	if err != nil {
		return nil, err
	}
	return hookFile{File: f, fs: h}, nil
}

func (h *hookFS) OpenFile(name string) (File, error) {
	f, err := h.MemFS.OpenFile(name)
	if err != nil {
		return nil, err
	}
	return hookFile{File: f, fs: h}, nil
}

type hookFile struct {
	File
	fs *hookFS
}

func (f hookFile) Write(p []byte) (int, error) {
	if hook := f.fs.beforeWrite.Load(); hook != nil {
		(*hook)()
	}
	return f.File.Write(p)
}

func (f hookFile) Sync() error {
	if hook := f.fs.beforeSync.Load(); hook != nil {
		(*hook)()
	}
	return f.File.Sync()
}

// gate makes the next write block: entered is closed when the flusher is
// inside that write, and the write proceeds once release is called.
type gate struct {
	entered chan struct{}
	proceed chan struct{}
}

func armWriteGate(h *hookFS) *gate {
	g := &gate{entered: make(chan struct{}), proceed: make(chan struct{})}
	var once atomic.Bool
	hook := func() {
		if once.CompareAndSwap(false, true) {
			close(g.entered)
			<-g.proceed
		}
	}
	h.beforeWrite.Store(&hook)
	return g
}

func (g *gate) release() { close(g.proceed) }

// newHookLog is a testLog whose FS is a hookFS over its MemFS.
func newHookLog(t testing.TB, segmentBytes int64) (*testLog, *hookFS) {
	tl := newTestLog(t, segmentBytes)
	h := &hookFS{MemFS: tl.fs}
	tl.opts.FS = h
	return tl, h
}
