package wal

import (
	"bytes"
	"errors"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"
)

// TestNoGoroutineLeak opens and closes logs, healthy and failed, and checks
// that no goroutine outlives them. Not parallel: it counts goroutines
// process-wide (parallel tests are paused while it runs).
func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	for i := range 4 {
		tl := newTestLog(t, 500)
		w, _ := tl.open()
		appendN(t, w, 0, 30, variedSize)
		if i%2 == 1 {
			tl.fs.FailNextSync(errors.New("injected"))
		}
		_ = w.Sync(t.Context())
		_ = w.Close()
	}
	// Bounded wait for exiting goroutines to be reaped; not a timing assertion.
	for range 200 {
		if runtime.NumGoroutine() <= before && !flusherRunning() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	var buf bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
	t.Fatalf("goroutines: %d before, %d after\n%s", before, runtime.NumGoroutine(), buf.String())
}

// flusherRunning reports whether any goroutine carries the flusher's label.
func flusherRunning() bool {
	var buf bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
	return strings.Contains(buf.String(), "wal-flusher")
}
