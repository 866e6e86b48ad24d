// Command objbench measures the broker against a real MinIO next to the
// local-folder bucket, in one run on one machine, all on loopback:
//
//   - produce throughput (1 KiB incompressible records, 8 partitions,
//     acks=all, 4 producers, linger 5 ms) until -bytes are acknowledged,
//     and the object PUTs per GB written;
//   - catch-up read throughput: after a graceful restart (everything
//     uploaded, caches cold) one consumer reads the topic from offset 0,
//     served from the object store, and the object GETs per GB read;
//   - the same catch-up read again once the compactor has rewritten the
//     upload objects into per-partition segments (read as streams: one GET
//     per segment and reader);
//   - the baseline for each catch-up read: a plain sequential GET (minio-go,
//     one object after another) of the objects it read (the upload objects,
//     then the compacted ones) from the same MinIO, three times (the median
//     is the baseline), and the compacted objects read through Sediment's
//     s3 backend in 4 MiB ranged GETs, one after another;
//   - the ceiling of the Kafka path: the same consumer reading the same
//     amount from the broker's memory (tail cache) right after producing.
//
// The page cache is dropped before every read measurement (-cold, needs
// root): MinIO writes around the cache, so otherwise whichever read of the
// same objects came second would be served from memory.
//
// MinIO runs on the same machine (its binary from .bin, as in the tests),
// so it competes with the broker for the CPU; the localfs figures are the
// reference for the same disk.
//
// Run from the repository root after `make minio`:
//
//	go run ./bench/objbench [-bytes 1GiB] [-targets localfs,minio-s3,minio-minio] [-drain=false] [-out bench/results/objects-DATE.json]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/sediment-io/sediment/bench/internal/probe"
	"github.com/sediment-io/sediment/storage/objectstore/miniotest"
)

type report struct {
	Machine  string             `json:"machine"`
	Bytes    int64              `json:"produced_bytes_per_target"`
	Targets  map[string]*figure `json:"targets"`
	Baseline baseline           `json:"minio_sequential_get"`
	// MemoryMBs is the same consumer reading the same amount from the
	// broker's tail cache right after producing it: the Kafka path's own
	// rate here, an upper bound for any catch-up read.
	MemoryMBs float64 `json:"read_from_broker_memory_mb_s"`
	// PageCache says whether the reads started from a cold page cache.
	PageCache string `json:"page_cache"`
}

// figure is one bucket's results.
type figure struct {
	ProduceMBs float64 `json:"produce_mb_s"`
	PutsPerGB  float64 `json:"object_puts_per_gb_written"`
	// The catch-up read of the upload objects; its VsBaselinePct is
	// against Baseline.
	catchUp
	// Baseline is the plain GET of the upload objects this catch-up read,
	// before compaction (MinIO through s3 only).
	Baseline *baseline `json:"minio_sequential_get_of_upload_objects,omitempty"`
	// After compaction: the same catch-up read once the compactor has
	// rewritten the upload objects into per-partition objects.
	Compacted *compacted `json:"after_compaction,omitempty"`
	// DrainSeconds is how long the upload backlog built while MinIO was
	// down took to reach the bucket once it was back (MinIO targets).
	DrainSeconds float64 `json:"backlog_drain_seconds,omitempty"`
	DrainBytes   float64 `json:"backlog_drain_bytes,omitempty"`
}

// catchUp is one catch-up read's figures: the median of catchUpRuns runs
// (Seconds its time), with every run's record MB/s in Runs.
type catchUp struct {
	MBs       float64   `json:"catch_up_read_mb_s"`
	ObjectMBs float64   `json:"catch_up_object_bytes_read_mb_s"`
	Seconds   float64   `json:"catch_up_seconds"`
	Runs      []float64 `json:"catch_up_runs_mb_s"`
	GetsPerGB float64   `json:"object_gets_per_gb_read"`
	AvgGetKiB float64   `json:"avg_get_kib"`
	// VsBaselinePct is the catch-up against the plain sequential GET of
	// the objects it read (MinIO through s3 only; see baseline.pctOf).
	VsBaselinePct float64 `json:"catch_up_vs_sequential_get_pct,omitempty"`
}

// compacted is the catch-up read after compaction.
type compacted struct {
	catchUp
	Segments float64 `json:"segments_compacted"`
}

type baseline struct {
	// MBs is the median of Runs: the plain GET from a cold page cache
	// moved between 517 and 904 MB/s from one run to the next here.
	MBs     float64   `json:"mb_s"`
	Runs    []float64 `json:"runs_mb_s"`
	Objects int       `json:"objects"`
	Bytes   int64     `json:"bytes"`
	// BackendRangeMBs reads the same objects through Sediment's s3
	// backend in 4 MiB ranged GETs, one after another.
	BackendRangeMBs float64 `json:"sediment_s3_backend_4mib_range_gets_mb_s,omitempty"`
}

// pctOf is a catch-up read of bytes of object data that took seconds, as
// a percentage of this plain GET's rate: the plain GET's time for those
// bytes over the catch-up's. bytes is what the topic takes in the store
// (the upload objects, all live when they are measured; compaction
// rewrites the same batches): the compacted prefix also holds objects
// awaiting garbage collection, which the plain GET reads too. Bytes the
// catch-up read twice (a block evicted before every partition's reader had
// been through it) do not count for it.
func (b baseline) pctOf(bytes int64, seconds float64) float64 {
	return 100 * float64(bytes) / mb / seconds / b.MBs
}

// measurePlainGet reads the objects the s3 target wrote with plain
// sequential GETs baselineRuns times, each from a cold page cache.
func measurePlainGet(ctx context.Context, srv *miniotest.Server) (baseline, error) {
	var base baseline
	for range baselineRuns {
		settle()
		if err := beforeRead(); err != nil {
			return base, err
		}
		b, err := sequentialGet(ctx, srv, "bench", "s3/")
		if err != nil {
			return base, err
		}
		base.Objects, base.Bytes = b.Objects, b.Bytes
		base.Runs = append(base.Runs, b.MBs)
	}
	base.MBs = median(base.Runs)
	return base, nil
}

func main() {
	size := flag.Int64("bytes", 1<<30, "record bytes to produce into each target")
	out := flag.String("out", "", "also write the JSON report here")
	drain := flag.Bool("drain", true, "also time draining a -bytes backlog built while MinIO is down")
	flag.BoolVar(&coldReads, "cold", true, "drop the page cache before every read measurement, so the catch-up reads and the plain GETs they are compared with start from the same (cold) cache; needs root, else the cache state is left as it is and the report says so")
	only := flag.String("targets", "localfs,minio-s3,minio-minio", "the targets to measure, comma-separated (minio-s3 is always measured: the ratio to the plain GET is its)")
	flag.Parse()
	ctx := context.Background()
	work, err := os.MkdirTemp("", "objbench-")
	check(err)
	defer os.RemoveAll(work)
	check(buildBroker(ctx, work))
	miniotest.UseTestCredentials() // for this process's own reads; brokers get srv.Env()
	srv, err := miniotest.Launch(filepath.Join(work, "minio"))
	check(err)
	defer srv.Stop()
	check(createBucket(srv, "bench"))
	r := report{Machine: probe.Machine(), Bytes: *size, Targets: map[string]*figure{}, PageCache: "left as it was"}
	if coldReads {
		r.PageCache = "dropped before every read measurement"
		if err := dropCaches(); err != nil {
			fmt.Fprintf(os.Stderr, "objbench: cannot drop the page cache (%v); reads run with whatever it holds\n", err)
			coldReads, r.PageCache = false, "left as it was (dropping it failed: "+err.Error()+")"
		}
	}
	targets := []struct{ name, url string }{
		{"localfs", ""},
		{"minio-s3", srv.S3URL("bench", "s3")},
		{"minio-minio", srv.MinioURL("bench", "minio")},
	}
	for _, tg := range targets {
		if tg.name != "minio-s3" && !slices.Contains(strings.Split(*only, ","), tg.name) {
			continue
		}
		var plainGet func() (baseline, error)
		if tg.name == "minio-s3" {
			plainGet = func() (baseline, error) { return measurePlainGet(ctx, srv) }
		}
		settle()
		f, err := runTarget(ctx, filepath.Join(work, tg.name), tg.url, srv.Env(), *size, plainGet)
		check(err)
		r.Targets[tg.name] = f
	}
	r.Baseline, err = measurePlainGet(ctx, srv)
	check(err)
	settle()
	check(beforeRead())
	r.Baseline.BackendRangeMBs, err = rangedGet(ctx, srv.S3URL("bench", "s3"))
	check(err)
	settle()
	r.MemoryMBs, err = measureMemoryCeiling(ctx, filepath.Join(work, "memory"), *size)
	check(err)
	f := r.Targets["minio-s3"]
	f.Compacted.VsBaselinePct = r.Baseline.pctOf(f.Baseline.Bytes, f.Compacted.Seconds)
	if *drain {
		settle()
		f.DrainSeconds, f.DrainBytes, err = measureDrain(ctx, filepath.Join(work, "drain"), srv, *size)
		check(err)
		fmt.Fprintf(os.Stderr, "backlog of %.2f GiB built while MinIO was down drained in %.1fs\n", f.DrainBytes/(1<<30), f.DrainSeconds)
	}
	fmt.Fprintf(os.Stderr, "sequential GET from MinIO of the upload objects: %.1f MB/s (median of %.0f MB/s) over %d objects; the catch-up read them at %.0f%% of it\n",
		f.Baseline.MBs, f.Baseline.Runs, f.Baseline.Objects, f.VsBaselinePct)
	fmt.Fprintf(os.Stderr, "sequential GET from MinIO of the compacted objects: %.1f MB/s (median of %.0f MB/s) over %d objects (Sediment's s3 backend, 4 MiB ranges: %.1f MB/s); the catch-up read them at %.0f%% of it (page cache %s)\n",
		r.Baseline.MBs, r.Baseline.Runs, r.Baseline.Objects, r.Baseline.BackendRangeMBs, f.Compacted.VsBaselinePct, r.PageCache)
	fmt.Fprintf(os.Stderr, "the same consumer reading from the broker's memory: %.1f MB/s\n", r.MemoryMBs)
	b, _ := json.MarshalIndent(r, "", "  ")
	fmt.Println(string(b))
	if *out != "" {
		check(os.WriteFile(*out, b, 0o644))
	}
}

// baselineRuns is how many times the plain GET is measured; the median
// is the baseline.
const baselineRuns = 3

// median returns the middle value of v (the mean of the two middle ones
// for an even count).
func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// settle writes back dirty pages and lets the disk go quiet.
func settle() {
	syscall.Sync()
	time.Sleep(2 * time.Second)
}

// coldReads drops the page cache before every read measurement.
var coldReads bool

// beforeRead drops the page cache when coldReads is set: MinIO writes its
// objects around the cache and reads them through it, so without this
// whichever read of the same bytes comes second is served from memory.
func beforeRead() error {
	if !coldReads {
		return nil
	}
	return dropCaches()
}

func dropCaches() error {
	syscall.Sync()
	return os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "objbench:", err)
		os.Exit(1)
	}
}
