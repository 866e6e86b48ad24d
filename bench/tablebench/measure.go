package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"sort"
	"strconv"
	"syscall"
	"time"

	itable "github.com/apache/iceberg-go/table"
)

type throughput struct {
	Records       int     `json:"records"`
	RecordBytes   int     `json:"record_bytes"`
	Partitions    int     `json:"partitions"`
	WallSeconds   float64 `json:"wall_seconds"`
	CPUSeconds    float64 `json:"cpu_seconds"`
	RowsPerSecond float64 `json:"rows_per_second"`
	RowsPerCore   float64 `json:"rows_per_second_per_core"`
	MBPerCore     float64 `json:"json_mb_per_second_per_core"`
	Commits       int64   `json:"commits"`
	Files         int64   `json:"files"`
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measureThroughput appends the records first, then enables the table and
// times the conversion of the backlog: wall time and the process's CPU
// time (the converter is the only thing running), so rows per CPU-second
// is rows per second per core.
func measureThroughput(ctx context.Context, cfg config) (*throughput, error) {
	s, err := newStack(ctx, "")
	if err != nil {
		return nil, err
	}
	defer s.close()
	topic, err := s.log.CreateTopic(ctx, "bench", int32(cfg.partitions), nil, false)
	if err != nil {
		return nil, err
	}
	if err := s.appendRecords(ctx, topic, 0, cfg.records, cfg.size, 200); err != nil {
		return nil, err
	}
	if cfg.cpuProfile != "" {
		f, err := os.Create(cfg.cpuProfile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}
	start, cpu0 := time.Now(), cpuTime()
	if err := enableTable(ctx, s, "bench", "1000"); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	if err := s.waitConverted(wctx, "bench", int64(cfg.records), 20*time.Millisecond); err != nil {
		return nil, err
	}
	wall, cpu := time.Since(start).Seconds(), (cpuTime() - cpu0).Seconds()
	st, _ := s.conv.Status("bench")
	return &throughput{Records: cfg.records, RecordBytes: cfg.size, Partitions: cfg.partitions, WallSeconds: wall, CPUSeconds: cpu,
		RowsPerSecond: float64(cfg.records) / wall, RowsPerCore: float64(cfg.records) / cpu,
		MBPerCore: float64(cfg.records*cfg.size) / cpu / 1e6, Commits: st.Commits, Files: st.Files}, nil
}

func enableTable(ctx context.Context, s *stack, topic, intervalMs string, extra ...string) error {
	return s.log.SetTopicConfigs(ctx, topic, func(cfg map[string]string) (map[string]string, error) {
		if cfg == nil {
			cfg = map[string]string{}
		}
		cfg["sediment.table.enable"] = "true"
		cfg["sediment.table.commit.interval.ms"] = intervalMs
		for i := 0; i+1 < len(extra); i += 2 {
			cfg[extra[i]] = extra[i+1]
		}
		return cfg, nil
	}, false)
}

type lagResult struct {
	CommitInterval string    `json:"commit_interval"`
	Samples        []float64 `json:"samples_seconds"`
	Mean           float64   `json:"mean_seconds"`
	Median         float64   `json:"median_seconds"`
	Max            float64   `json:"max_seconds"`
}

// measureLag appends one record at a random moment of the commit cycle and
// polls the catalog until a snapshot covers it, samples times.
func measureLag(ctx context.Context, interval time.Duration, samples, size int) (lagResult, error) {
	res := lagResult{CommitInterval: interval.String()}
	s, err := newStack(ctx, "")
	if err != nil {
		return res, err
	}
	defer s.close()
	topic, err := s.log.CreateTopic(ctx, "lag", 1, nil, false)
	if err != nil {
		return res, err
	}
	if err := enableTable(ctx, s, "lag", strconv.FormatInt(interval.Milliseconds(), 10)); err != nil {
		return res, err
	}
	for i := range samples + 1 { // the first sample warms up (creates the table)
		time.Sleep(time.Duration(rand.Int64N(int64(interval))))
		start := time.Now()
		if err := s.appendRecords(ctx, topic, i, 1, size, 1); err != nil {
			return res, err
		}
		if err := waitVisible(ctx, s, "lag", int64(i+1), 3*interval+time.Minute); err != nil {
			return res, err
		}
		if i > 0 {
			res.Samples = append(res.Samples, time.Since(start).Seconds())
		}
	}
	sorted := append([]float64(nil), res.Samples...)
	sort.Float64s(sorted)
	for _, v := range sorted {
		res.Mean += v / float64(len(sorted))
	}
	res.Median, res.Max = sorted[len(sorted)/2], sorted[len(sorted)-1]
	return res, nil
}

// waitVisible polls the catalog (as a reader would) until the table's
// current snapshot says partition 0 is converted up to next.
func waitVisible(ctx context.Context, s *stack, topic string, next int64, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		tbl, err := s.cat.LoadTable(ctx, itable.Identifier{"sediment", topic})
		if err == nil && tbl.CurrentSnapshot() != nil {
			v, _ := strconv.ParseInt(tbl.CurrentSnapshot().Summary.Properties["sediment.next-offset.0"], 10, 64)
			if v >= next {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("offset %d not visible in %s after %s", next-1, topic, limit)
}
