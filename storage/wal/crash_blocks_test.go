package wal

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var crashSeeds = flag.Int("wal.crashseeds", 1000, "number of seeds TestCrashDropsBlocks runs")

// TestCrashDropsBlocks cuts the power while the flusher is inside an fsync,
// after which a random part of the unsynced blocks made it to disk, in any
// order (MemFS.CrashBlocks), one seed at a time. The oracle: Open succeeds,
// every frame whose Wait returned is recovered byte for byte, and what is
// recovered is a prefix of what was appended: nothing else, nothing twice.
// More seeds: go test ./storage/wal -run TestCrashDropsBlocks -wal.crashseeds=100000
func TestCrashDropsBlocks(t *testing.T) {
	t.Parallel()
	const workers = 16
	for k := range workers {
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			t.Parallel()
			for seed := k; seed < *crashSeeds; seed += workers {
				crashBlocksOnce(t, uint64(seed))
				if t.Failed() {
					return
				}
			}
		})
	}
}

func crashBlocksOnce(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 17))
	tl, h := newHookLog(t, []int64{300, 800, 4096}[rng.IntN(3)])
	w, _ := tl.open()
	size := func(int) int { return rng.IntN(300) }
	var all []frame
	acked := 0 // all[:acked] had Wait return nil
	for range 1 + rng.IntN(6) {
		all = append(all, appendN(t, w, len(all), 1+rng.IntN(10), size)...)
		if rng.IntN(2) == 0 {
			if err := w.Wait(context.Background(), all[len(all)-1].end); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			acked = len(all)
		}
	}
	g := armSyncGate(h)
	more := appendN(t, w, len(all), rng.IntN(10), size)
	all = append(all, more...)
	if len(more) > 0 {
		select {
		case <-g.entered: // the flusher is inside an fsync: its writes are unsynced
		case <-time.After(10 * time.Second):
			t.Fatalf("seed %d: the flusher never reached fsync", seed)
		}
	}
	tl.fs.CrashBlocks(rng, []int{16, 64, 512}[rng.IntN(3)], rng.IntN(101))
	g.release()
	_ = w.Close() // the crashed process's handles are dead

	w, got, err := tl.openErr()
	if err != nil {
		t.Fatalf("seed %d: Open after a power cut: %v\nlogs:\n%s", seed, err, tl.logs)
	}
	checkRecovered(t, seed, got, all, acked)
	checkContinues(t, tl, w, got)
}

// checkRecovered applies the crash oracle.
func checkRecovered(t *testing.T, seed uint64, got, all []frame, acked int) {
	t.Helper()
	if len(got) > len(all) {
		t.Fatalf("seed %d: replayed %d frames, only %d appended", seed, len(got), len(all))
	}
	for i, g := range got {
		if err := diffFrame(g, all[i]); err != nil {
			t.Fatalf("seed %d: replayed frame %d is not the one appended: %v", seed, i, err)
		}
	}
	if len(got) < acked {
		t.Fatalf("seed %d: replayed %d frames, but %d were acknowledged", seed, len(got), acked)
	}
}

// armSyncGate makes the next fsync block until release; entered is closed
// when the flusher is inside it.
func armSyncGate(h *hookFS) *gate {
	g := &gate{entered: make(chan struct{}), proceed: make(chan struct{})}
	var once atomic.Bool
	hook := func() {
		if once.CompareAndSwap(false, true) {
			close(g.entered)
			<-g.proceed
		}
	}
	h.beforeSync.Store(&hook)
	return g
}

// TestAcknowledgedFrameDamageIsCorruption is the failure tried by hand:
// the last frame of the log, fsynced and acknowledged, gets a 4 KiB hole.
// Whether the process was killed or closed, that is corruption, not a torn
// tail, and Open names the file and the frame's offset.
func TestAcknowledgedFrameDamageIsCorruption(t *testing.T) {
	t.Parallel()
	for _, stop := range []string{"killed", "closed"} {
		t.Run(stop, func(t *testing.T) {
			t.Parallel()
			tl := newTestLog(t, 64<<20)
			w, _ := tl.open()
			frames := appendN(t, w, 0, 100, func(int) int { return 2000 })
			frames = append(frames, appendN(t, w, 100, 1, func(int) int { return 197_000 })...)
			syncOrFatal(t, w) // acknowledged
			if stop == "killed" {
				tl.fs.Kill()
			} else if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			last := frames[len(frames)-1]
			path := tl.path(0)
			off := segmentHeaderSize + int64(last.pos)
			b, err := tl.fs.Bytes(path)
			if err != nil {
				t.Fatal(err)
			}
			clear(b[off+50_000 : off+50_000+4096])
			tl.fs.SetBytes(path, b)

			_, _, err = tl.openErr()
			var ce *CorruptionError
			if !errors.As(err, &ce) || ce.File != path || ce.Offset != off {
				t.Fatalf("Open: %v; want corruption in %s at offset %d\nlogs:\n%s", err, path, off, tl.logs)
			}
		})
	}
}

// TestHoleInUnsyncedTailIsTorn: power loss wrote the pages of a flush whose
// fsync never returned out of order, so a hole is followed by intact
// frames. None of them was acknowledged: the tail is cut at the hole, and
// every acknowledged frame comes back.
func TestHoleInUnsyncedTailIsTorn(t *testing.T) {
	t.Parallel()
	tl, h := newHookLog(t, 64<<20)
	w, _ := tl.open()
	acked := appendN(t, w, 0, 10, func(int) int { return 500 })
	syncOrFatal(t, w)
	g := armSyncGate(h)
	unsynced := appendN(t, w, 10, 5, func(int) int { return 1000 })
	<-g.entered
	tl.fs.CrashTorn(func(_ string, n int) int { return n }) // every page written back...
	g.release()
	_ = w.Close()
	path := tl.path(0)
	b, err := tl.fs.Bytes(path)
	if err != nil {
		t.Fatal(err)
	}
	hole := segmentHeaderSize + int64(unsynced[1].pos) + 100
	clear(b[hole : hole+512]) // ...but one, in the second unsynced frame
	tl.fs.SetBytes(path, b)

	w, got := tl.open()
	sameFrames(t, got, append(acked, unsynced[0]))
	if logs := tl.logs.String(); !containsAll(logs, "torn tail", segmentName(0), "dropped_bytes") {
		t.Fatalf("truncation not logged with file and size:\n%s", logs)
	}
	checkContinues(t, tl, w, got)
}

// containsAll reports whether s contains every one of subs.
func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
