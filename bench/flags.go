package bench

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
)

// Usage introduces `broker bench`'s flags.
const Usage = `Usage: broker bench --workload FILE (--launch sediment|cluster|kafka|kfake | --bootstrap HOST:PORT | --vs A,B[,C...]) [flags] [-- broker serve flags]

Runs an OpenMessaging-style workload with franz-go producers and consumers
and writes OUT/results.json, OUT/summary.md and plots (SVG and PNG).
The targets of --vs are sediment, cluster or cluster:N (an etcd from
make .bin/etcd and --cluster-brokers or N brokers on it, with --minio), kafka (Apache Kafka in a
JVM, from make java-interop), kfake or HOST:PORT of a running broker.
Flags after -- are passed to every launched "broker serve".

`

// cliFlags are `broker bench`'s flag values.
type cliFlags struct {
	workload, launch, bootstrap, vs, out, metrics string
	brokerBin, objectStore, brokerFlags, note     string
	backlog, rerender                             string
	kafkaProps                                    map[string]string
	rounds, partitions, rate, clusterBrokers      int
	count                                         int64
	duration, loopback, sample, drain             time.Duration
	kafkaWarmup, failoverAfter                    time.Duration
	minio, quiet                                  bool
	storeLatency                                  time.Duration
}

func (f *cliFlags) register(fs *flag.FlagSet, self string) {
	fs.StringVar(&f.workload, "workload", "", "workload YAML file (see bench/workloads)")
	fs.StringVar(&f.launch, "launch", "", "start the target: sediment (subprocess), cluster (etcd and --cluster-brokers sediment subprocesses), kafka (Apache Kafka in a JVM) or kfake (in-process)")
	fs.StringVar(&f.bootstrap, "bootstrap", "", "HOST:PORT of a running Kafka-compatible broker")
	fs.StringVar(&f.metrics, "metrics", "", "with --bootstrap: the broker's Prometheus URL (http://HOST:PORT/metrics)")
	fs.StringVar(&f.vs, "vs", "", "two or more targets run alternately in one invocation, e.g. sediment,kafka")
	fs.IntVar(&f.rounds, "rounds", 0, "rounds per target the workload is split into (default 1, 2 with --vs)")
	fs.StringVar(&f.out, "out", "", "output directory (default bench/out/WORKLOAD)")
	fs.DurationVar(&f.duration, "duration", 0, "override the workload's duration (and drop its count)")
	fs.Int64Var(&f.count, "count", 0, "override the workload's record count (and drop its duration)")
	fs.StringVar(&f.backlog, "backlog-bytes", "", "override the backlog size (e.g. 1GiB)")
	fs.IntVar(&f.partitions, "partitions", 0, "override partitions per topic")
	fs.IntVar(&f.rate, "rate", 0, "override the producer rate (records/s over all producers)")
	fs.StringVar(&f.brokerBin, "broker-bin", self, "broker binary for --launch sediment")
	fs.StringVar(&f.objectStore, "object-store", "", "--object-store URL for a launched sediment (default: its local folder)")
	fs.BoolVar(&f.minio, "minio", false, "start a MinIO server (./.bin/minio or SEDIMENT_MINIO) and give a launched sediment a bucket on it")
	fs.DurationVar(&f.storeLatency, "store-latency", 0, "with --minio: hold every object-store request this long (a remote bucket's round trip)")
	fs.IntVar(&f.clusterBrokers, "cluster-brokers", 3, "brokers of a launched cluster (1..16) named cluster; cluster:N in --vs has N")
	fs.DurationVar(&f.failoverAfter, "failover-after", 0, "with a cluster: SIGKILL the broker owning the most partitions this long into the first round, and time each of its partitions to its first acknowledged produce elsewhere; 0: no kill")
	fs.StringVar(&f.brokerFlags, "broker-flags", "", "more flags for a launched sediment, space-separated (or give them after --)")
	f.kafkaProps = map[string]string{}
	fs.DurationVar(&f.kafkaWarmup, "kafka-warmup", 20*time.Second, "how long a launched kafka runs the workload, unmeasured, before the first round (its JVM's JIT warm-up); 0: none")
	fs.Func("kafka-prop", "KEY=VALUE for a launched kafka's server.properties, repeatable (e.g. log.flush.interval.messages=1)",
		func(kv string) error { return ParseKafkaProp(f.kafkaProps, kv) })
	fs.DurationVar(&f.loopback, "loopback", 2*time.Second, "how long to measure the loopback TCP ceiling")
	fs.DurationVar(&f.sample, "sample", time.Second, "throughput timeline step")
	fs.DurationVar(&f.drain, "drain-timeout", 2*time.Minute, "how long consumers may trail the producers")
	fs.StringVar(&f.note, "machine-note", "", "recorded with the machine description (what else was running)")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress line")
	fs.StringVar(&f.rerender, "rerender", "", "only rewrite summary.md and the plots of DIR from its results.json")
}

// ParseArgs reads `broker bench` arguments into a Config. self is the
// running broker binary, launched for --launch sediment unless
// --broker-bin says otherwise; progress goes to stderr.
func ParseArgs(args []string, self string, stderr io.Writer) (*Config, error) {
	fs := flag.NewFlagSet("broker bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, Usage); fs.PrintDefaults() }
	f := &cliFlags{}
	f.register(fs, self)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if f.rerender != "" {
		return &Config{Rerender: f.rerender, OutDir: f.rerender}, nil
	}
	w, err := f.workloadWithOverrides()
	if err != nil {
		return nil, err
	}
	if f.minio && f.objectStore != "" {
		return nil, errors.New("bench: --minio and --object-store both choose the bucket: give one")
	}
	if f.storeLatency < 0 || f.storeLatency > 0 && !f.minio {
		return nil, errors.New("bench: --store-latency needs --minio (the proxy stands in front of the run's MinIO) and a duration >= 0")
	}
	sed := SedimentLaunch{Bin: f.brokerBin, ObjectStore: f.objectStore,
		Flags: append(strings.Fields(f.brokerFlags), fs.Args()...)}
	targets, err := parseTargets(f.launch, f.bootstrap, f.vs, f.metrics, sed)
	if err != nil {
		return nil, err
	}
	if err := setKafkaLaunch(targets, f.kafkaProps, f.kafkaWarmup); err != nil {
		return nil, err
	}
	if err := f.setClusterLaunch(targets, w); err != nil {
		return nil, err
	}
	if f.out == "" {
		f.out = filepath.Join("bench", "out", w.Name)
	}
	cfg := &Config{Workload: w, Targets: targets, Rounds: f.rounds, OutDir: f.out, LoopbackDuration: f.loopback,
		SampleInterval: f.sample, DrainTimeout: f.drain, MachineNote: f.note, MinIO: f.minio, StoreLatency: f.storeLatency,
		Command: append([]string{"broker", "bench"}, args...)}
	if !f.quiet {
		cfg.Progress = stderr
	}
	return cfg, nil
}

// workloadWithOverrides loads --workload and applies the override flags.
func (f *cliFlags) workloadWithOverrides() (*Workload, error) {
	if f.workload == "" {
		return nil, errors.New("bench: --workload FILE is required")
	}
	w, err := LoadWorkload(f.workload)
	if err != nil {
		return nil, err
	}
	ov := Overrides{Duration: f.duration, Count: f.count, Partitions: f.partitions, ProducerRate: f.rate}
	if f.backlog != "" {
		b := new(ByteSize)
		if err := b.parse(f.backlog); err != nil {
			return nil, fmt.Errorf("bench: --backlog-bytes: %w", err)
		}
		ov.BacklogBytes = *b
	}
	return ov.Apply(w)
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
		return nil, errors.New("bench: give exactly one of --launch sediment|cluster|kafka|kfake, --bootstrap HOST:PORT and --vs A,B[,C...]")
	}
	switch {
	case launch != "":
		if launch != "sediment" && launch != "cluster" && launch != "kafka" && launch != "kfake" {
			return nil, fmt.Errorf("bench: --launch %q: want sediment, cluster, kafka or kfake", launch)
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
	if len(parts) < 2 || len(parts) > MaxTargets {
		return nil, fmt.Errorf("bench: --vs %q: want two to %d targets A,B[,C...]", vs, MaxTargets)
	}
	var out []TargetSpec
	for i, p := range parts {
		t, err := ParseTargetSpec(p, sed)
		if err != nil {
			return nil, err
		}
		for _, prev := range out {
			if prev.Label() == t.Label() {
				return nil, fmt.Errorf("bench: --vs %q: target %d (%s) is given twice", vs, i+1, t.Label())
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// setKafkaLaunch gives every kafka target the --kafka-prop properties and
// the warm-up; the properties are an error when no target is kafka, so
// that a typo in --vs does not pass unnoticed.
func setKafkaLaunch(targets []TargetSpec, props map[string]string, warmup time.Duration) error {
	used := false
	for i := range targets {
		if targets[i].Kind == "kafka" {
			targets[i].Kafka.Props = props
			targets[i].Kafka.Warmup = warmup
			used = true
		}
	}
	if len(props) > 0 && !used {
		return errors.New("bench: --kafka-prop without a kafka target (--launch kafka or --vs ...,kafka)")
	}
	return nil
}

// setClusterLaunch gives every cluster target its brokers and failover,
// and refuses what cannot run: a cluster without a shared bucket, a
// failover without a cluster (or with one broker, or a backlog workload,
// which produces nothing while it reads).
func (f *cliFlags) setClusterLaunch(targets []TargetSpec, w *Workload) error {
	cluster, oneBroker := false, false
	for i := range targets {
		if targets[i].Kind == "cluster" {
			if targets[i].Cluster.Brokers == 0 {
				targets[i].Cluster.Brokers = f.clusterBrokers
			}
			targets[i].Cluster.FailoverAfter = f.failoverAfter
			cluster = true
			oneBroker = oneBroker || targets[i].Cluster.Brokers < 2
		}
		for _, prev := range targets[:i] {
			if prev.Label() == targets[i].Label() {
				return fmt.Errorf("bench: target %s is given twice", prev.Label())
			}
		}
	}
	switch {
	case f.clusterBrokers < 1 || f.clusterBrokers > maxClusterBrokers:
		return fmt.Errorf("bench: --cluster-brokers %d: want 1..%d", f.clusterBrokers, maxClusterBrokers)
	case f.failoverAfter < 0:
		return fmt.Errorf("bench: --failover-after %s: must not be negative", f.failoverAfter)
	case !cluster && f.failoverAfter > 0:
		return errors.New("bench: --failover-after needs a cluster target (--launch cluster or --vs ...,cluster)")
	case !cluster:
		return nil
	case f.failoverAfter > 0 && oneBroker:
		return errors.New("bench: --failover-after needs clusters of 2 or more brokers (--cluster-brokers, cluster:N): the partitions need a broker to move to")
	case f.failoverAfter > 0 && w.BacklogBytes > 0:
		return errors.New("bench: --failover-after needs a live workload (duration or count): a backlog workload reads with nothing produced")
	case !f.minio && !sharedBucket(f.objectStore):
		return errors.New("bench: a cluster target needs a bucket its brokers share: give --minio (a MinIO server started for the run, from make minio) or --object-store s3://... or minio://...")
	}
	return nil
}

// sharedBucket reports whether an --object-store URL names a bucket that
// several brokers can share (a file:// folder is one broker's).
func sharedBucket(url string) bool {
	return strings.HasPrefix(url, "s3://") || strings.HasPrefix(url, "minio://")
}
