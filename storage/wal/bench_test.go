package wal

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
)

// BenchmarkAppendWait measures acknowledged appends (Append then Wait) from
// many goroutines, on the real filesystem and on MemFS. Run with -cpu and
// -benchtime to taste; syncs/op shows how well group commit batches.
func BenchmarkAppendWait(b *testing.B) {
	for _, backend := range []string{"os", "mem"} {
		for _, size := range []int{100, 4096} {
			b.Run(fmt.Sprintf("%s/%dB", backend, size), func(b *testing.B) {
				benchAppendWait(b, backend, size)
			})
		}
	}
}

func benchAppendWait(b *testing.B, backend string, size int) {
	opts := Options{Dir: b.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if backend == "mem" {
		// MemFS reallocates files as they grow: keep segments small.
		opts.FS, opts.SegmentBytes = NewMemFS(), 1<<20
	}
	w, err := Open(opts, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	p := payload(1, size)
	b.SetBytes(int64(size))
	b.SetParallelism(16) // many producers per CPU, as a broker has
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			_, end, err := w.Append(1, p)
			if err == nil {
				err = w.Wait(ctx, end)
			}
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	st := w.Stats()
	b.ReportMetric(float64(st.Syncs)/float64(b.N), "syncs/op")
}
