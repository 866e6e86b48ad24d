package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxTargets is how many targets one run measures side by side.
const MaxTargets = 4

// Config is one `broker bench` invocation.
type Config struct {
	Workload *Workload
	// Targets are measured in the same run: one, or up to MaxTargets
	// with --vs, whose rounds alternate (A B, B A, ...) so that drift of
	// the machine weighs on all alike.
	Targets []TargetSpec
	// Rounds splits the workload (its duration, count or backlog) into
	// this many rounds per target. Default 1, or 2 with several targets.
	Rounds           int
	OutDir           string        // reports go here; results.json always
	Progress         io.Writer     // live progress (stderr); nil: none
	LoopbackDuration time.Duration // the ceiling measurement, default 2s
	SampleInterval   time.Duration // throughput timeline step, default 1s
	DrainTimeout     time.Duration // how long consumers may trail the producers, default 2m
	Command          []string      // recorded in results.json
	MachineNote      string        // recorded with the machine description
	// Rerender, when set, is a directory whose summary and plots are
	// rewritten from its results.json; nothing is measured.
	Rerender string
	// MinIO starts a local MinIO server (./.bin/minio) for the run and
	// gives a launched Sediment a bucket on it (--object-store s3://...).
	MinIO bool
	// StoreLatency, with MinIO, holds every request of a launched broker
	// to MinIO for this long, standing in for a remote bucket.
	StoreLatency time.Duration
}

func (c *Config) fillDefaults() error {
	if c.Workload == nil {
		return errors.New("bench: no workload")
	}
	if len(c.Targets) == 0 || len(c.Targets) > MaxTargets {
		return fmt.Errorf("bench: want one to %d targets (--vs A,B,...), got %d", MaxTargets, len(c.Targets))
	}
	if c.OutDir == "" {
		return errors.New("bench: no output directory (--out)")
	}
	c.Targets = slices.Clone(c.Targets)
	for i := range c.Targets {
		for _, sl := range []*SedimentLaunch{&c.Targets[i].Sediment, &c.Targets[i].Cluster.Sediment} {
			sl.Flags = append(slices.Clone(c.Workload.BrokerFlags), sl.Flags...)
		}
	}
	if c.Rounds <= 0 {
		c.Rounds = min(len(c.Targets), 2)
	}
	setDefault(&c.LoopbackDuration, 2*time.Second)
	setDefault(&c.SampleInterval, time.Second)
	setDefault(&c.DrainTimeout, 2*time.Minute)
	return nil
}

// Run measures the workload on every target, writes the reports into
// OutDir and returns the results. It returns an error, with the results
// still written, when a target did not get every record through.
func Run(ctx context.Context, cfg Config) (*Results, error) {
	if cfg.Rerender != "" {
		return Rerender(cfg.Rerender)
	}
	if err := cfg.fillDefaults(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("bench: out: %w", err)
	}
	res := &Results{Schema: ResultsSchema, Started: time.Now().UTC(), Command: cfg.Command,
		Machine: DescribeMachine(), Workload: cfg.Workload, Rounds: cfg.Rounds, Prices: Prices}
	res.Machine.Note = cfg.MachineNote
	lb, err := MeasureLoopback(cfg.LoopbackDuration)
	if err != nil {
		return nil, err
	}
	res.Loopback = lb
	say(cfg.Progress, "loopback TCP ceiling: %.0f MB/s", lb.MBPerSec)
	if cfg.MinIO {
		stop, err := attachMinIO(ctx, &cfg)
		if err != nil {
			return nil, err
		}
		defer stop()
	}
	targets, err := launchAll(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer func() { closeAll(targets, res) }()
	notes, err := warmUp(ctx, cfg, targets)
	if err != nil {
		return nil, err
	}
	res.Notes = append(res.Notes, notes...)
	rounds, err := runRounds(ctx, cfg, targets)
	if err != nil {
		return nil, err
	}
	for i, spec := range cfg.Targets {
		res.Targets = append(res.Targets, mergeRounds(spec, rounds[i], lb.MBPerSec))
	}
	noteTableLag(res)
	setRatios(res)
	closeAll(targets, res)
	targets = nil
	if err := WriteReports(cfg.OutDir, res); err != nil {
		return res, err
	}
	return res, incomplete(res)
}

// attachMinIO starts a MinIO server and points the launched Sediment at a
// bucket on it; stop stops the server (after the brokers).
func attachMinIO(ctx context.Context, cfg *Config) (stop func() error, err error) {
	m, err := startMinIO(ctx)
	if err != nil {
		return nil, err
	}
	store, stop := m.objectStore(), m.stop
	if cfg.StoreLatency > 0 {
		p, err := startLatencyProxy(m.srv.Endpoint(), cfg.StoreLatency)
		if err != nil {
			m.stop()
			return nil, err
		}
		store = m.objectStoreAt(p.endpoint())
		stop = func() error { return errors.Join(p.stop(), m.stop()) }
		say(cfg.Progress, "every object-store request held %v (proxy %s)", cfg.StoreLatency, p.endpoint())
	}
	for i := range cfg.Targets {
		for _, sl := range []*SedimentLaunch{&cfg.Targets[i].Sediment, &cfg.Targets[i].Cluster.Sediment} {
			sl.ObjectStore = store
			sl.Env = append(sl.Env, m.env()...)
		}
	}
	say(cfg.Progress, "MinIO on %s, bucket %s", m.srv.Addr, minioBucket)
	return stop, nil
}

// launchAll starts every target; a broker's log goes to OUT/broker-N.log
// and a launched Kafka keeps its data in a temp dir under OUT.
func launchAll(ctx context.Context, cfg Config) ([]Target, error) {
	var targets []Target
	for i, spec := range cfg.Targets {
		logPath := filepath.Join(cfg.OutDir, "broker-"+strconv.Itoa(i)+".log")
		if spec.Kind == "sediment" && spec.Sediment.LogPath == "" {
			spec.Sediment.LogPath = logPath
		}
		if spec.Kind == "cluster" && spec.Cluster.LogPrefix == "" {
			spec.Cluster.LogPrefix = filepath.Join(cfg.OutDir, "broker-"+strconv.Itoa(i)+"-")
		}
		if spec.Kind == "kafka" {
			spec.Kafka.Parent = cmp.Or(spec.Kafka.Parent, cfg.OutDir)
			spec.Kafka.LogPath = cmp.Or(spec.Kafka.LogPath, logPath)
		}
		t, err := Launch(ctx, spec)
		if err != nil {
			for _, t := range targets {
				t.Close()
			}
			return nil, err
		}
		targets = append(targets, t)
	}
	return targets, nil
}

func closeAll(targets []Target, res *Results) {
	for _, t := range targets {
		if err := t.Close(); err != nil {
			res.Notes = append(res.Notes, err.Error())
		}
	}
}

// runRounds runs every round, alternating the targets' order (A B, B A,
// ...), and returns each target's rounds.
func runRounds(ctx context.Context, cfg Config, targets []Target) ([][]*roundResult, error) {
	w := cfg.Workload.split(cfg.Rounds)
	prog := newProgress(cfg.Progress)
	runID := strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	out := make([][]*roundResult, len(targets))
	for n := range cfg.Rounds {
		for k := range targets {
			i := k
			if n%2 == 1 {
				i = len(targets) - 1 - k
			}
			r := &round{target: targets[i], w: w, sample: cfg.SampleInterval, drain: cfg.DrainTimeout, progress: prog,
				topics: topicNames(w, runID, i, n),
				label:  fmt.Sprintf("[%s %d/%d]", cfg.Targets[i].Label(), n+1, cfg.Rounds)}
			if c, ok := targets[i].(*clusterTarget); ok && w.BacklogBytes == 0 {
				r.failover = c.takeFailover()
			}
			rr, err := r.runCompared(ctx)
			if err != nil {
				return nil, fmt.Errorf("bench: %s round %d: %w", cfg.Targets[i].Label(), n+1, err)
			}
			out[i] = append(out[i], rr)
		}
	}
	return out, nil
}

func topicNames(w *Workload, runID string, target, n int) []string {
	names := make([]string, w.Topics)
	for i := range names {
		names[i] = fmt.Sprintf("bench-%s-%s-%d-%d-%d", w.Name, runID, target, n, i)
	}
	return names
}

// split is the share of the workload one of n rounds runs.
func (w *Workload) split(n int) *Workload {
	c := *w
	if n > 1 {
		c.Duration /= time.Duration(n)
		c.Count = (c.Count + int64(n) - 1) / int64(n)
		c.BacklogBytes /= ByteSize(n)
		c.Warmup /= time.Duration(n)
	}
	return &c
}

// setRatios sets every target's headline figures over the first
// target's, and res.Ratios to the second's.
func setRatios(res *Results) {
	for i := 1; i < len(res.Targets); i++ {
		res.Targets[i].VsFirst = ratios(res.Targets[0], res.Targets[i])
	}
	if len(res.Targets) > 1 {
		res.Ratios = res.Targets[1].VsFirst
	}
}

// ratios are b's headline figures over a's.
func ratios(a, b TargetResult) map[string]float64 {
	out := map[string]float64{}
	put := func(name string, x, y float64) {
		if x > 0 {
			out[name] = y / x
		}
	}
	put("produce_mb_per_s", a.Produce.MBPerSec, b.Produce.MBPerSec)
	put("consume_mb_per_s", a.Consume.MBPerSec, b.Consume.MBPerSec)
	put("produce_ack_p50", a.ProduceAck.P50Ms, b.ProduceAck.P50Ms)
	put("produce_ack_p99", a.ProduceAck.P99Ms, b.ProduceAck.P99Ms)
	put("end_to_end_p50", a.EndToEnd.P50Ms, b.EndToEnd.P50Ms)
	put("end_to_end_p99", a.EndToEnd.P99Ms, b.EndToEnd.P99Ms)
	if a.Broker != nil && b.Broker != nil {
		put("cpu_seconds_per_gb", a.Broker.CPUSecondsPerGB, b.Broker.CPUSecondsPerGB)
		put("peak_rss", a.Broker.PeakRSSBytes, b.Broker.PeakRSSBytes)
	}
	txnRatios(out, a.Transactions, b.Transactions)
	return out
}

func incomplete(res *Results) error {
	var errs []error
	for _, t := range res.Targets {
		if !t.Complete {
			errs = append(errs, fmt.Errorf("bench: %s: %d records acknowledged, %d consumed; %s",
				t.Target, t.Produced, t.Consumed, strings.Join(t.Errors, "; ")))
		}
	}
	return errors.Join(errs...)
}

func say(out io.Writer, format string, args ...any) {
	if out != nil {
		fmt.Fprintf(out, format+"\n", args...)
	}
}

// noteTableLag says, for a table-topic workload, when a target gave no
// table metrics to report the table lag from.
func noteTableLag(res *Results) {
	if res.Workload.TopicConfig["sediment.table.enable"] != "true" {
		return
	}
	for i, t := range res.Targets {
		switch {
		case t.Broker == nil:
			res.Targets[i].Notes = append(res.Targets[i].Notes, "no metrics endpoint: the table lag is not reported")
		case len(t.Broker.TableMetricsLast) == 0:
			res.Targets[i].Notes = append(res.Targets[i].Notes, "the broker exposes no sediment_table_* metrics: the table lag is not reported")
		}
	}
}
