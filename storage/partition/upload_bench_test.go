package partition

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/objectstore/mem"
	"github.com/sediment-io/sediment/storage/wal"
)

// BenchmarkObjectDurabilityProduce: produce acknowledged with --durability
// object, through a store whose PUTs take 100 ms (an object store's
// latency; the mem store's SetLatency), objects cut every 50 ms, with one
// and with four PUTs in flight. 16 producers each send 256 KiB batches and
// wait for each one's acknowledgement. It reports the acknowledged MB/s and
// the produce p99.
func BenchmarkObjectDurabilityProduce(b *testing.B) {
	for _, conc := range []int{1, 4} {
		b.Run(fmt.Sprintf("upload-concurrency=%d", conc), func(b *testing.B) {
			benchObjectProduce(b, conc)
		})
	}
}

func benchObjectProduce(b *testing.B, conc int) {
	kv, err := metadata.OpenBolt(filepath.Join(b.TempDir(), "meta.db"))
	if err != nil {
		b.Fatal(err)
	}
	meta := metadata.NewStore(kv)
	defer meta.Close()
	store := mem.New()
	store.SetLatency(100 * time.Millisecond)
	l, err := Open(context.Background(), Options{Meta: meta, Store: store, WALDir: "/wal", WALFS: wal.NewMemFS(),
		Durability: DurabilityObject, UploadInterval: 50 * time.Millisecond, UploadConcurrency: conc,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	tp, err := l.CreateTopic(context.Background(), "bench", 8, nil, false)
	if err != nil {
		b.Fatal(err)
	}
	const producers, batchBytes = 16, 256 << 10
	value := make([]byte, batchBytes)
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	b.SetBytes(batchBytes)
	b.ResetTimer()
	start := time.Now()
	for w := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := tp.Partition(int32(w % 8))
			for i := w; i < b.N; i += producers {
				t0 := time.Now()
				res, err := l.Append(context.Background(), p, testBatch{values: [][]byte{value}}.encode())
				if err == nil {
					err = l.Wait(context.Background(), res)
				}
				if err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				lat = append(lat, time.Since(t0))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(len(lat))*batchBytes/(1<<20)/secs, "MiB/s")
	}
}
