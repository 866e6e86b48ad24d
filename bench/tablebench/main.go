// Command tablebench measures table topics: rows per second converted per
// core for JSON records, the lag between an append and its visibility in
// the Iceberg table at a commit interval, and the object-store requests one
// commit makes (on a real MinIO behind a counting proxy).
//
//	go run ./bench/tablebench                       # all three, results in bench/results/tables-DATE.json
//	go run ./bench/tablebench -lag-intervals 1s     # skip the slow 60 s lag samples
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

type config struct {
	records, size, partitions int
	lagIntervals              []time.Duration
	lagSamples                int
	minio                     bool
	out                       string
	cpuProfile                string
}

// results is what the run writes as JSON.
type results struct {
	Date       string          `json:"date"`
	Machine    string          `json:"machine"`
	Throughput *throughput     `json:"throughput,omitempty"`
	Lag        []lagResult     `json:"lag,omitempty"`
	Requests   *requestsResult `json:"requests_per_commit,omitempty"`
	Command    string          `json:"command"`
}

func main() {
	var cfg config
	var lags string
	flag.IntVar(&cfg.records, "records", 100_000, "records converted in the throughput run")
	flag.IntVar(&cfg.size, "size", 1024, "JSON record size in bytes")
	flag.IntVar(&cfg.partitions, "partitions", 4, "partitions of the table topic")
	flag.StringVar(&lags, "lag-intervals", "1s,60s", "commit intervals to measure produce-to-visible lag at")
	flag.IntVar(&cfg.lagSamples, "lag-samples", 5, "samples per lag interval")
	flag.BoolVar(&cfg.minio, "minio", true, "measure object-store requests per commit on a MinIO (./.bin/minio or SEDIMENT_MINIO)")
	flag.StringVar(&cfg.out, "out", filepath.Join("bench", "results", "tables-"+time.Now().UTC().Format("2006-01-02")+".json"), "results file")
	flag.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write a CPU profile of the throughput run to this file")
	flag.Parse()
	for _, s := range strings.Split(lags, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		d, err := time.ParseDuration(s)
		if err != nil || d < time.Second {
			fatal(fmt.Errorf("-lag-intervals %q: want durations of at least 1s", s))
		}
		cfg.lagIntervals = append(cfg.lagIntervals, d)
	}
	if err := run(cfg); err != nil {
		fatal(err)
	}
}

func run(cfg config) error {
	ctx := context.Background()
	res := results{Date: time.Now().UTC().Format(time.RFC3339), Command: "go run ./bench/tablebench " + strings.Join(os.Args[1:], " "),
		Machine: fmt.Sprintf("%s/%s, %d CPUs, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())}
	var err error
	if res.Throughput, err = measureThroughput(ctx, cfg); err != nil {
		return fmt.Errorf("throughput: %w", err)
	}
	report("throughput", res.Throughput)
	for _, iv := range cfg.lagIntervals {
		lr, err := measureLag(ctx, iv, cfg.lagSamples, cfg.size)
		if err != nil {
			return fmt.Errorf("lag at %s: %w", iv, err)
		}
		report("lag", lr)
		res.Lag = append(res.Lag, lr)
	}
	if cfg.minio {
		if res.Requests, err = measureRequests(ctx, cfg); err != nil {
			return fmt.Errorf("requests per commit: %w", err)
		}
		report("requests per commit", res.Requests)
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	if err := os.MkdirAll(filepath.Dir(cfg.out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(cfg.out, append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Println("results written to", cfg.out)
	return nil
}

func report(what string, v any) {
	b, _ := json.Marshal(v)
	fmt.Printf("%s: %s\n", what, b)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "tablebench:", err)
	os.Exit(1)
}
