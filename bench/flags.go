package bench

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Usage introduces `broker bench`'s flags.
const Usage = `Usage: broker bench --workload FILE (--launch sediment|kfake | --bootstrap HOST:PORT | --vs A,B) [flags] [-- broker serve flags]

Runs an OpenMessaging-style workload with franz-go producers and consumers
and writes OUT/results.json, OUT/summary.md and plots (SVG and PNG).
A, B of --vs are sediment, kfake or HOST:PORT of a running broker.
Flags after -- are passed to a launched "broker serve".

`

// ParseArgs reads `broker bench` arguments into a Config. self is the
// running broker binary, launched for --launch sediment unless
// --broker-bin says otherwise.
func ParseArgs(args []string, self string, stderr io.Writer) (*Config, error) {
	fs := flag.NewFlagSet("broker bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, Usage); fs.PrintDefaults() }
	var (
		workload, launch, bootstrap, vs, out, metrics string
		brokerBin, objectStore, brokerFlags, note     string
		rounds, partitions, rate                      int
		count                                         int64
		duration, loopback, sample, drain             time.Duration
		backlog                                       string
		minio, quiet                                  bool
	)
	fs.StringVar(&workload, "workload", "", "workload YAML file (see bench/workloads)")
	fs.StringVar(&launch, "launch", "", "start the target: sediment (subprocess) or kfake (in-process)")
	fs.StringVar(&bootstrap, "bootstrap", "", "HOST:PORT of a running Kafka-compatible broker")
	fs.StringVar(&metrics, "metrics", "", "with --bootstrap: the broker's Prometheus URL (http://HOST:PORT/metrics)")
	fs.StringVar(&vs, "vs", "", "two targets run alternately in one invocation, e.g. sediment,kfake")
	fs.IntVar(&rounds, "rounds", 0, "rounds per target the workload is split into (default 1, 2 with --vs)")
	fs.StringVar(&out, "out", "", "output directory (default bench/out/WORKLOAD)")
	fs.DurationVar(&duration, "duration", 0, "override the workload's duration (and drop its count)")
	fs.Int64Var(&count, "count", 0, "override the workload's record count (and drop its duration)")
	fs.StringVar(&backlog, "backlog-bytes", "", "override the backlog size (e.g. 1GiB)")
	fs.IntVar(&partitions, "partitions", 0, "override partitions per topic")
	fs.IntVar(&rate, "rate", 0, "override the producer rate (records/s over all producers)")
	fs.StringVar(&brokerBin, "broker-bin", self, "broker binary for --launch sediment")
	fs.StringVar(&objectStore, "object-store", "", "--object-store URL for a launched sediment (default: its local folder)")
	fs.BoolVar(&minio, "minio", false, "start a MinIO server (./.bin/minio or SEDIMENT_MINIO) and give a launched sediment a bucket on it")
	fs.StringVar(&brokerFlags, "broker-flags", "", "more flags for a launched sediment, space-separated (or give them after --)")
	fs.DurationVar(&loopback, "loopback", 2*time.Second, "how long to measure the loopback TCP ceiling")
	fs.DurationVar(&sample, "sample", time.Second, "throughput timeline step")
	fs.DurationVar(&drain, "drain-timeout", 2*time.Minute, "how long consumers may trail the producers")
	fs.StringVar(&note, "machine-note", "", "recorded with the machine description (what else was running)")
	fs.BoolVar(&quiet, "quiet", false, "no progress line")
	var rerender string
	fs.StringVar(&rerender, "rerender", "", "only rewrite summary.md and the plots of DIR from its results.json")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if rerender != "" {
		return &Config{Rerender: rerender, OutDir: rerender}, nil
	}
	if workload == "" {
		return nil, errors.New("bench: --workload FILE is required")
	}
	w, err := LoadWorkload(workload)
	if err != nil {
		return nil, err
	}
	ov := Overrides{Duration: duration, Count: count, Partitions: partitions, ProducerRate: rate}
	if backlog != "" {
		b := new(ByteSize)
		if err := b.parse(backlog); err != nil {
			return nil, fmt.Errorf("bench: --backlog-bytes: %w", err)
		}
		ov.BacklogBytes = *b
	}
	if w, err = ov.Apply(w); err != nil {
		return nil, err
	}
	sed := SedimentLaunch{Bin: brokerBin, ObjectStore: objectStore,
		Flags: append(strings.Fields(brokerFlags), fs.Args()...)}
	if minio && objectStore != "" {
		return nil, errors.New("bench: --minio and --object-store both choose the bucket: give one")
	}
	targets, err := parseTargets(launch, bootstrap, vs, metrics, sed)
	if err != nil {
		return nil, err
	}
	if out == "" {
		out = filepath.Join("bench", "out", w.Name)
	}
	cfg := &Config{Workload: w, Targets: targets, Rounds: rounds, OutDir: out, LoopbackDuration: loopback,
		SampleInterval: sample, DrainTimeout: drain, MachineNote: note, MinIO: minio,
		Command: append([]string{"broker", "bench"}, args...)}
	if !quiet {
		cfg.Progress = os.Stderr
	}
	return cfg, nil
}

// parseTargets reads the one of --launch, --bootstrap and --vs given.
func parseTargets(launch, bootstrap, vs, metrics string, sed SedimentLaunch) ([]TargetSpec, error) {
	given := 0
	for _, s := range []string{launch, bootstrap, vs} {
		if s != "" {
			given++
		}
	}
	if given != 1 {
		return nil, errors.New("bench: give exactly one of --launch sediment|kfake, --bootstrap HOST:PORT and --vs A,B")
	}
	switch {
	case launch != "":
		if launch != "sediment" && launch != "kfake" {
			return nil, fmt.Errorf("bench: --launch %q: want sediment or kfake", launch)
		}
		t, err := ParseTargetSpec(launch, sed)
		return []TargetSpec{t}, err
	case bootstrap != "":
		t, err := ParseTargetSpec(bootstrap, sed)
		if err == nil && t.Kind != "bootstrap" {
			err = fmt.Errorf("bench: --bootstrap %q: want HOST:PORT (use --launch to start a broker)", bootstrap)
		}
		t.MetricsURL = metrics
		return []TargetSpec{t}, err
	}
	parts := strings.Split(vs, ",")
	if len(parts) != 2 {
		return nil, fmt.Errorf("bench: --vs %q: want two targets A,B", vs)
	}
	var out []TargetSpec
	for _, p := range parts {
		t, err := ParseTargetSpec(p, sed)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}
