package wal

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

var recoverBytes = flag.Int64("wal.recoverbytes", 1<<30, "WAL size for BenchmarkRecoverAfterBlockCrash")

// BenchmarkRecoverAfterBlockCrash measures Open on a real-file WAL of
// -wal.recoverbytes (default 1 GiB, 16 KiB frames, 64 MiB segments, a
// flush every 4 MiB) whose last flush was cut by a power loss that wrote
// its pages back out of order: 4 MiB of frames with no commit after them,
// a quarter of their 4 KiB blocks zeroed (as MemFS.CrashBlocks does). Each
// iteration restores that tail and drops the files from the page cache
// first, so the figure includes reading the whole log from disk.
//
//	go test ./storage/wal -run '^$' -bench RecoverAfterBlockCrash -benchtime 3x
func BenchmarkRecoverAfterBlockCrash(b *testing.B) {
	dir := b.TempDir()
	opts := Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	last, tail := buildCrashedLog(b, opts, *recoverBytes)
	b.SetBytes(*recoverBytes)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		if err := os.WriteFile(last, tail, 0o644); err != nil {
			b.Fatal(err)
		}
		dropPageCache(b, dir)
		b.StartTimer()
		frames := 0
		w, err := Open(opts, func(Pos, RecordType, []byte) error { frames++; return nil })
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		b.ReportMetric(float64(frames), "frames")
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// buildCrashedLog writes the log and returns the last segment's path and
// its crashed contents.
func buildCrashedLog(b *testing.B, opts Options, size int64) (string, []byte) {
	w, err := Open(opts, nil)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	p := make([]byte, 16<<10)
	for i := range p {
		p[i] = byte(rng.Uint32())
	}
	const flushEvery = 4 << 20
	for n := int64(0); n < size-flushEvery; n += int64(len(p)) {
		if _, _, err := w.Append(1, p); err != nil {
			b.Fatal(err)
		}
		if (n+int64(len(p)))%flushEvery == 0 {
			if err := w.Sync(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	segs := segmentStarts(b, opts.Dir)
	last := filepath.Join(opts.Dir, segmentName(segs[len(segs)-1]))
	tail, err := os.ReadFile(last)
	if err != nil {
		b.Fatal(err)
	}
	tail = tail[:len(tail)-commitFrameSize] // the last commit never written
	from := len(tail)
	for range flushEvery / len(p) {
		tail = append(tail, encodeFrame(1, p)...)
	}
	for blk := from - from%4096; blk < len(tail); blk += 4096 {
		if rng.IntN(4) == 0 {
			clear(tail[max(blk, from):min(blk+4096, len(tail))])
		}
	}
	return last, tail
}

// segmentStarts lists the starts of the segment files in dir.
func segmentStarts(b *testing.B, dir string) []Pos {
	names, err := OSFS{}.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	var starts []Pos
	for _, n := range names {
		if s, ok := parseSegmentName(n); ok {
			starts = append(starts, s)
		}
	}
	return starts
}

// dropPageCache asks the kernel to forget the cached pages of every file
// in dir, so the next read comes from the disk.
func dropPageCache(b *testing.B, dir string) {
	names, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range names {
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		_ = f.Sync()
		_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
		f.Close()
	}
}
