package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/bench/internal/probe"
)

const mib = 1 << 20

func splitLines(s string) []string { return strings.Split(s, "\n") }

// runThroughput measures produce throughput on each target, alternating so
// the machine's drift affects them alike.
func runThroughput(ctx context.Context, work string, d time.Duration, targets []string, r *report) {
	for _, name := range targets {
		t := launch(name, filepath.Join(work, "tp-"+name))
		check(createTopic(ctx, t.addr, "tp", 8))
		before := t.metrics()
		bps, recs, err := throughput(ctx, t.addr, "tp", 4, 1024, d)
		check(err)
		after := t.metrics()
		r.ThroughputMBs[name] = bps / mib
		if name == "sediment" {
			if url := os.Getenv("COREBENCH_PROFILE"); url != "" {
				fmt.Fprintf(os.Stderr, "profile: go tool pprof http://%s/debug/pprof/profile\n", t.http)
			}
			secs := d.Seconds()
			r.Sediment = sedimentFigures{
				FsyncsPerSec:  delta(before, after, "sediment_wal_fsyncs_total") / secs,
				ProducePerSec: delta(before, after, `sediment_requests_total{api="Produce"}`) / secs,
				PutsPerSec:    delta(before, after, `sediment_object_requests_total{op="put",result="ok"}`) / secs,
				PeakRSSMiB:    float64(t.peakRSS()) / mib,
				RecordsPerSec: float64(recs) / secs,
			}
		}
		t.stop()
		fmt.Fprintf(os.Stderr, "throughput %-16s %8.1f MB/s\n", name, bps/mib)
	}
}

func delta(before, after probe.Metrics, key string) float64 { return after[key] - before[key] }

func launch(name, dir string, flags ...string) *target {
	switch name {
	case "kfake":
		t, err := launchKfake(false)
		check(err)
		return t
	case "kfake-blackhole":
		t, err := launchKfake(true)
		check(err)
		return t
	}
	check(os.MkdirAll(dir, 0o755))
	t, err := launchSediment(bin, dir, flags...)
	check(err)
	return t
}

// runLatency measures end-to-end latency at 5,000 records/s.
func runLatency(ctx context.Context, work string, d time.Duration, r *report) {
	syncs, err := diskSyncs(work, min(d, 10*time.Second))
	check(err)
	for _, p := range []float64{50, 90, 99, 99.9, 100} {
		r.DiskSyncMs[fmt.Sprintf("p%g", p)] = float64(percentile(syncs, p).Microseconds()) / 1000
	}
	fmt.Fprintf(os.Stderr, "disk alone: fdatasync after a 4 KiB append p50 %v p99 %v p99.9 %v\n", percentile(syncs, 50), percentile(syncs, 99), percentile(syncs, 99.9))
	settle()
	syncs, err = busyDiskSyncs(work, min(d, 10*time.Second))
	check(err)
	for _, p := range []float64{50, 90, 99, 99.9, 100} {
		r.DiskSyncBusyMs[fmt.Sprintf("p%g", p)] = float64(percentile(syncs, p).Microseconds()) / 1000
	}
	fmt.Fprintf(os.Stderr, "disk, every core busy: fdatasync after a 4 KiB append p50 %v p99 %v p99.9 %v\n", percentile(syncs, 50), percentile(syncs, 99), percentile(syncs, 99.9))
	settle()
	t := launch("sediment", filepath.Join(work, "lat"))
	defer t.stop()
	check(createTopic(ctx, t.addr, "lat", 8))
	lats, acks, err := latency(ctx, t.addr, "lat", 5000, d)
	check(err)
	m := t.metrics()
	var buckets []string
	for _, le := range []string{"0.0008", "0.0016", "0.0032", "0.0064", "0.0128", "0.0256", "0.0512", "+Inf"} {
		n := m.Sum("sediment_wal_fsync_seconds_bucket", `le="`+le+`"`)
		r.WALSyncs["le "+le] = n
		buckets = append(buckets, fmt.Sprintf("≤%s s: %.0f", le, n))
	}
	fmt.Fprintf(os.Stderr, "WAL fsyncs %s\n", strings.Join(buckets, ", "))
	sortDurations(lats)
	sortDurations(acks)
	for _, p := range []float64{50, 90, 99, 99.9, 100} {
		r.LatencyMs[fmt.Sprintf("p%g", p)] = float64(percentile(lats, p).Microseconds()) / 1000
		r.AckLatencyMs[fmt.Sprintf("p%g", p)] = float64(percentile(acks, p).Microseconds()) / 1000
	}
	fmt.Fprintf(os.Stderr, "e2e latency p50 %v p99 %v p99.9 %v\n", percentile(lats, 50), percentile(lats, 99), percentile(lats, 99.9))
	fmt.Fprintf(os.Stderr, "ack latency p50 %v p99 %v p99.9 %v\n", percentile(acks, 50), percentile(acks, 99), percentile(acks, 99.9))

	k, err := launchKfake(false)
	check(err)
	defer k.stop()
	check(createTopic(ctx, k.addr, "lat", 8))
	lats, _, err = latency(ctx, k.addr, "lat", 5000, d)
	check(err)
	sortDurations(lats)
	for _, p := range []float64{50, 90, 99, 99.9, 100} {
		r.KfakeLatencyMs[fmt.Sprintf("p%g", p)] = float64(percentile(lats, p).Microseconds()) / 1000
	}
	fmt.Fprintf(os.Stderr, "kfake e2e latency p50 %v p99 %v p99.9 %v\n", percentile(lats, 50), percentile(lats, 99), percentile(lats, 99.9))
}

// diskSyncs appends 4 KiB to a file in dir and fdatasyncs it, every
// half millisecond for d, and returns the fdatasync latencies, sorted.
func diskSyncs(dir string, d time.Duration) ([]time.Duration, error) {
	f, err := os.OpenFile(filepath.Join(dir, "disk-probe"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	block := make([]byte, 4096)
	var lats []time.Duration
	for end := time.Now().Add(d); time.Now().Before(end); {
		if _, err := f.Write(block); err != nil {
			return nil, err
		}
		start := time.Now()
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			return nil, fmt.Errorf("fdatasync %s: %w", f.Name(), err)
		}
		lats = append(lats, time.Since(start))
		time.Sleep(500 * time.Microsecond)
	}
	sortDurations(lats)
	return lats, nil
}

// busyDiskSyncs runs diskSyncs while one spinning thread per core keeps
// every core busy, and one more scheduler slot is left for the probe.
func busyDiskSyncs(dir string, d time.Duration) ([]time.Duration, error) {
	cores := runtime.NumCPU()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cores + 1))
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range cores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for !stop.Load() { // an atomic load: the loop cannot be dropped
			}
		}()
	}
	defer wg.Wait()
	defer stop.Store(true)
	return diskSyncs(dir, d)
}

// runPuts measures object PUTs/s with 8 and with 1,000 partitions taking
// writes at the same fixed rate (5,000 records/s spread round-robin over
// every partition), slow enough that the upload interval, not the upload
// byte threshold, cuts the objects.
func runPuts(ctx context.Context, work string, d time.Duration, r *report) {
	for _, parts := range []int32{8, 1000} {
		t := launch("sediment", filepath.Join(work, fmt.Sprintf("puts-%d", parts)))
		check(createTopic(ctx, t.addr, "puts", parts))
		before := t.metrics()
		start := time.Now()
		check(produceAtRate(ctx, t.addr, "puts", 5000, d))
		d := time.Since(start)
		after := t.metrics()
		rate := delta(before, after, `sediment_object_requests_total{op="put",result="ok"}`) / d.Seconds()
		r.PutsPerSec[fmt.Sprintf("%d_partitions", parts)] = rate
		t.stop()
		fmt.Fprintf(os.Stderr, "puts/s with %d partitions: %.2f\n", parts, rate)
	}
}

// runRestart fills the WAL with 1 GiB that is never uploaded (uploads are
// held back by a huge interval and threshold), kills the broker with
// SIGKILL, and times the restart until /readyz.
func runRestart(ctx context.Context, work string, r *report) {
	dir := filepath.Join(work, "restart")
	t := launch("sediment", dir, "--upload-interval", "1h", "--upload-bytes", "1073741824")
	check(createTopic(ctx, t.addr, "fill", 8))
	cl, err := kgo.NewClient(kgo.SeedBrokers(t.addr), kgo.DefaultProduceTopic("fill"),
		kgo.ProducerLinger(5*time.Millisecond), kgo.MaxBufferedRecords(20000), kgo.ProducerBatchCompression(kgo.NoCompression()))
	check(err)
	value := randomBytes(1024)
	const total = (1 << 30) / 1100 // about 1 GiB of WAL with batch and frame overhead
	for i := 0; i < total; i++ {
		cl.Produce(ctx, &kgo.Record{Value: value}, nil)
	}
	check(cl.Flush(ctx))
	cl.Close()
	wal := t.metrics()["sediment_wal_backlog_bytes"]
	t.kill9()
	start := time.Now()
	t.flags = nil
	check(t.start())
	r.RestartSec = time.Since(start).Seconds()
	r.RestartWALGiB = wal / (1 << 30)
	t.stop()
	fmt.Fprintf(os.Stderr, "restart with %.2f GiB of WAL: %.2fs\n", r.RestartWALGiB, r.RestartSec)
}
