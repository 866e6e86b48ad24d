package wal

import (
	"context"
	"errors"
	"fmt"
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
