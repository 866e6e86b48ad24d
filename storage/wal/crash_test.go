package wal

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestCrash appends, acknowledges some frames, appends more without
// waiting, cuts the power (keeping a random part of unsynced bytes: torn
// writes) and reopens. Every acknowledged frame must come back; nothing
// that was not appended may; positions must match.
func TestCrash(t *testing.T) {
	t.Parallel()
	for seed := range uint64(30) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			crashOnce(t, rand.New(rand.NewPCG(seed, 7)))
		})
	}
}

func crashOnce(t *testing.T, rng *rand.Rand) {
	tl := newTestLog(t, 800)
	w, _ := tl.open()
	size := func(int) int { return rng.IntN(300) }
	var all []frame
	acked := 0 // all[:acked] had Wait return nil
	for range 1 + rng.IntN(6) {
		all = append(all, appendN(t, w, len(all), 1+rng.IntN(20), size)...)
		if rng.IntN(2) == 0 {
			if err := w.Wait(context.Background(), all[len(all)-1].end); err != nil {
				t.Fatal(err)
			}
			acked = len(all)
		}
	}
	all = append(all, appendN(t, w, len(all), rng.IntN(20), size)...)
	durable := w.Durable()
	tl.fs.CrashTorn(func(_ string, n int) int { return rng.IntN(n + 1) })
	_ = w.Close() // the crashed process's handles are dead; Close must still return

	w, got := tl.open()
	if len(got) > len(all) {
		t.Fatalf("replayed %d frames, only %d appended", len(got), len(all))
	}
	for i, g := range got {
		if err := diffFrame(g, all[i]); err != nil {
			t.Fatalf("replayed frame %d: %v", i, err)
		}
	}
	if len(got) < acked || (len(got) < len(all) && all[len(got)].end <= durable) {
		t.Fatalf("replayed %d frames; %d were acknowledged, durable was %d", len(got), acked, durable)
	}
	checkContinues(t, tl, w, got)
}

// checkContinues appends after a recovery and checks the new frame lands
// right after the recovered ones and survives a clean reopen.
func checkContinues(t *testing.T, tl *testLog, w *WAL, kept []frame) {
	t.Helper()
	var end Pos
	if len(kept) > 0 {
		end = kept[len(kept)-1].end
	}
	head := w.Head()
	if head < end || head > end+commitFrameSize {
		t.Fatalf("head after recovery %d, want %d or the end of a flush commit after it", head, end)
	}
	next := appendN(t, w, 1000, 2, func(int) int { return 33 })
	if next[0].pos != head {
		t.Fatalf("first append after recovery at %d, want the head %d", next[0].pos, head)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, got := tl.open()
	sameFrames(t, got, append(append([]frame(nil), kept...), next...))
}
