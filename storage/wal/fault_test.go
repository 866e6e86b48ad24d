package wal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestInjectedFailure fails one write or one fsync and checks the log
// fails for good: every waiter and every later append gets the error, what
// was durable before stays so, and Close still returns.
func TestInjectedFailure(t *testing.T) {
	t.Parallel()
	for _, inject := range []string{"write", "sync"} {
		for _, segBytes := range []int64{1 << 20, 300} { // 300: the failure can hit a roll
			t.Run(fmt.Sprintf("%s/%d", inject, segBytes), func(t *testing.T) {
				t.Parallel()
				failOnce(t, inject, segBytes)
			})
		}
	}
}

func failOnce(t *testing.T, inject string, segBytes int64) {
	tl := newTestLog(t, segBytes)
	w, _ := tl.open()
	before := appendN(t, w, 0, 5, func(int) int { return 100 })
	syncOrFatal(t, w)
	boom := errors.New("injected")
	if inject == "write" {
		tl.fs.FailNextWrite(boom)
	} else {
		tl.fs.FailNextSync(boom)
	}

	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			_, end, err := w.Append(1, payload(i, 150))
			if err == nil {
				err = w.Wait(context.Background(), end)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, boom) {
			t.Fatalf("writer got %v, want the injected error", err)
		}
	}
	checkFailed(t, tl, w, boom, before)
}

// checkFailed checks that w failed with boom for good, that the frames
// durable before the failure stay so, and that Close still returns.
func checkFailed(t *testing.T, tl *testLog, w *WAL, boom error, before []frame) {
	t.Helper()
	if _, _, err := w.Append(1, []byte("later")); !errors.Is(err, boom) {
		t.Fatalf("Append after failure: %v", err)
	}
	if err := w.Sync(context.Background()); !errors.Is(err, boom) {
		t.Fatalf("Sync after failure: %v", err)
	}
	if err := w.Wait(context.Background(), before[4].end); err != nil {
		t.Fatalf("Wait for data durable before the failure: %v", err)
	}
	if err := w.Close(); !errors.Is(err, boom) {
		t.Fatalf("Close after failure: %v", err)
	}
	tl.fs.Crash()
	_, got := tl.open()
	sameFrames(t, got[:len(before)], before)
}

// TestFailureSurfaced checks that a failed fsync is surfaced to the log's
// owner once, through OnFail and Err, and is never retried: a later Sync
// that would succeed changes nothing, and the owner's hook replaces the
// log's own error line, so the failure is said once.
func TestFailureSurfaced(t *testing.T) {
	t.Parallel()
	tl := newTestLog(t, 1<<20)
	var calls []error // appended under the WAL's lock, read after Close
	tl.opts.OnFail = func(err error) { calls = append(calls, err) }
	w, _ := tl.open()
	appendN(t, w, 0, 3, func(int) int { return 100 })
	syncOrFatal(t, w)
	if err := w.Err(); err != nil {
		t.Fatalf("Err of a healthy log: %v", err)
	}
	boom := errors.New("injected EIO")
	tl.fs.FailNextSync(boom)
	if _, _, err := w.Append(1, []byte("unsynced")); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(context.Background()); !errors.Is(err, boom) {
		t.Fatalf("Sync with a failing fsync: %v", err)
	}
	if err := w.Err(); !errors.Is(err, boom) {
		t.Fatalf("Err after a failed fsync: %v, want the injected error", err)
	}
	// The next fsync would succeed: the log must not try it.
	if err := w.Sync(context.Background()); !errors.Is(err, boom) {
		t.Fatalf("Sync after the failure: %v", err)
	}
	if err := w.Err(); !errors.Is(err, boom) {
		t.Fatalf("Err is not sticky: %v", err)
	}
	w.Close()
	if len(calls) != 1 || !errors.Is(calls[0], boom) {
		t.Fatalf("OnFail calls: %v, want one with the injected error", calls)
	}
	if strings.Contains(tl.logs.String(), "log failed") {
		t.Fatalf("the WAL logged the failure its owner reports:\n%s", tl.logs)
	}
}
