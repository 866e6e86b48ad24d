// Command corebench measures the core broker's figures in one run, all on
// loopback, and prints them as JSON and as a table:
//
//   - produce throughput (1 KiB records, 8 partitions, acks=all, 4 producers,
//     linger 5 ms) of Sediment, of franz-go's kfake (in memory, no
//     durability) and of kfake with BlackholeProduce (the client's ceiling);
//   - Sediment's fsyncs/s next to produce requests/s, PUTs/s and peak RSS
//     during that run;
//   - end-to-end latency percentiles at a fixed 5,000 records/s;
//   - object PUTs/s with 8 and with 1,000 partitions under load;
//   - restart time with 1 GiB of WAL not yet uploaded.
//
// Run from the repository root: go run ./bench/corebench [-duration 20s].
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/sediment-io/sediment/bench/internal/probe"
)

type report struct {
	Machine       string             `json:"machine"`
	ThroughputMBs map[string]float64 `json:"produce_throughput_mb_s"`
	Sediment      sedimentFigures    `json:"sediment"`
	LatencyMs     map[string]float64 `json:"e2e_latency_ms_at_5000_rps"`
	AckLatencyMs  map[string]float64 `json:"produce_ack_latency_ms_at_5000_rps"`
	// KfakeLatencyMs is the same latency run against kfake (in memory, no
	// durability): what the clients and the two shared cores cost alone.
	KfakeLatencyMs map[string]float64 `json:"kfake_e2e_latency_ms_at_5000_rps"`
	// DiskSyncMs is the baseline for the latencies: 4 KiB appends, each
	// followed by fdatasync, on the data directory's disk with nothing
	// else running, just before the latency run. An acks=all record waits
	// for at least one such flush, and for the one in flight when it came.
	DiskSyncMs map[string]float64 `json:"disk_fdatasync_ms"`
	// DiskSyncBusyMs is the same probe while every core is kept busy by a
	// spinning thread: on a virtual machine whose disk is served by the
	// host, a busy guest can hold up the completion of its own I/O. The
	// latency run keeps the cores about 70% busy (broker and clients).
	DiskSyncBusyMs map[string]float64 `json:"disk_fdatasync_ms_cores_busy"`
	// WALSyncs counts the broker's WAL fsyncs in the latency run by
	// duration (upper bounds in seconds, cumulative).
	WALSyncs      map[string]float64 `json:"wal_fsyncs_by_duration"`
	PutsPerSec    map[string]float64 `json:"object_puts_per_s"`
	RestartSec    float64            `json:"restart_seconds_with_1gib_wal"`
	RestartWALGiB float64            `json:"restart_wal_gib"`
}

type sedimentFigures struct {
	FsyncsPerSec  float64 `json:"fsyncs_per_s"`
	ProducePerSec float64 `json:"produce_requests_per_s"`
	PutsPerSec    float64 `json:"object_puts_per_s"`
	PeakRSSMiB    float64 `json:"peak_rss_mib"`
	RecordsPerSec float64 `json:"records_per_s"`
}

func main() {
	d := flag.Duration("duration", 20*time.Second, "length of each timed run")
	skipRestart := flag.Bool("skip-restart", false, "skip the 1 GiB WAL restart measurement")
	only := flag.String("only", "", "run only this part: throughput, latency, puts or restart")
	targets := flag.String("targets", "kfake-blackhole,kfake,sediment", "throughput targets, in order")
	out := flag.String("out", "", "also write the JSON report here")
	flag.Parse()
	ctx := context.Background()
	work, err := os.MkdirTemp("", "corebench-")
	check(err)
	defer os.RemoveAll(work)
	bin, err = buildBroker(ctx, work)
	check(err)
	r := report{Machine: probe.Machine(), ThroughputMBs: map[string]float64{}, LatencyMs: map[string]float64{}, AckLatencyMs: map[string]float64{}, KfakeLatencyMs: map[string]float64{},
		DiskSyncMs: map[string]float64{}, DiskSyncBusyMs: map[string]float64{}, WALSyncs: map[string]float64{}, PutsPerSec: map[string]float64{}}
	run := func(part string) bool {
		settle() // earlier parts' dirty pages must not slow this one
		return *only == "" || *only == part
	}
	if run("latency") {
		runLatency(ctx, work, *d, &r)
	}
	if run("puts") {
		runPuts(ctx, work, *d, &r)
	}
	if run("throughput") {
		runThroughput(ctx, work, *d, strings.Split(*targets, ","), &r)
	}
	if run("restart") && !*skipRestart {
		runRestart(ctx, work, &r)
	}
	b, _ := json.MarshalIndent(r, "", "  ")
	fmt.Println(string(b))
	if *out != "" {
		check(os.WriteFile(*out, b, 0o644))
	}
}

// settle writes back dirty pages and lets the disk go quiet.
func settle() {
	syscall.Sync()
	time.Sleep(2 * time.Second)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "corebench:", err)
		os.Exit(1)
	}
}
