package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestClusterParseArgs: cluster as a --launch and --vs target, its
// brokers and failover, and what it refuses.
func TestClusterParseArgs(t *testing.T) {
	wl := "workloads/failover.yaml"
	cfg, err := ParseArgs([]string{"--workload", wl, "--launch", "cluster", "--minio", "--failover-after", "10s",
		"--out", "x", "--", "--session-timeout", "3s"}, "self", &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Targets[0]
	if len(cfg.Targets) != 1 || c.Kind != "cluster" || c.Label() != "cluster:3" || c.Cluster.Brokers != 3 ||
		c.Cluster.FailoverAfter != 10*time.Second || c.Cluster.Sediment.Bin != "self" ||
		!slices.Equal(c.Cluster.Sediment.Flags, []string{"--session-timeout", "3s"}) || !cfg.MinIO {
		t.Fatalf("--launch cluster: %+v", cfg.Targets)
	}

	cfg, err = ParseArgs([]string{"--workload", wl, "--vs", "sediment,cluster:1,cluster", "--cluster-brokers", "5",
		"--object-store", "s3://b/p?endpoint=http://127.0.0.1:9000", "--out", "x"}, "self", &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Targets[0].Kind != "sediment" || cfg.Targets[1].Cluster.Brokers != 1 || cfg.Targets[2].Cluster.Brokers != 5 ||
		cfg.Targets[2].Cluster.FailoverAfter != 0 || cfg.Targets[2].Cluster.Sediment.ObjectStore != "s3://b/p?endpoint=http://127.0.0.1:9000" ||
		cfg.Targets[1].Label() != "cluster:1" || cfg.Targets[2].Label() != "cluster:5" {
		t.Fatalf("--vs sediment,cluster:1,cluster: %+v", cfg.Targets)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--launch", "cluster"}, "give --minio"},
		{[]string{"--launch", "cluster", "--object-store", "file:///tmp/b"}, "give --minio"},
		{[]string{"--launch", "sediment", "--failover-after", "5s"}, "needs a cluster target"},
		{[]string{"--launch", "cluster", "--minio", "--cluster-brokers", "1", "--failover-after", "5s"}, "clusters of 2 or more brokers"},
		{[]string{"--vs", "cluster:1,cluster:3", "--minio", "--failover-after", "5s"}, "clusters of 2 or more brokers"},
		{[]string{"--vs", "cluster:0,sediment", "--minio"}, "want cluster:N with N brokers, 1..16"},
		{[]string{"--vs", "cluster:3,cluster", "--minio"}, "given twice"},
		{[]string{"--launch", "cluster", "--minio", "--cluster-brokers", "0"}, "want 1..16"},
		{[]string{"--launch", "cluster", "--minio", "--failover-after", "-1s"}, "must not be negative"},
		{[]string{"--launch", "cluster", "--minio", "--failover-after", "5s", "--backlog-bytes", "1MiB"}, "needs a live workload"},
		{[]string{"--launch", "clusters"}, "want sediment, cluster, kafka or kfake"},
	} {
		_, err := ParseArgs(append([]string{"--workload", wl, "--out", "x"}, tc.args...), "self", &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

// TestWorkloadBrokerFlags: a workload's broker_flags come before the
// command line's on every launched Sediment, one broker or a cluster's,
// and set the upload interval the cluster figures use.
func TestWorkloadBrokerFlags(t *testing.T) {
	w, err := LoadWorkload("workloads/etcd-hour.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Workload: w, OutDir: "x", Targets: []TargetSpec{
		{Kind: "sediment", Sediment: SedimentLaunch{Flags: []string{"--log-level", "info"}}},
		{Kind: "cluster", Cluster: ClusterLaunch{Sediment: SedimentLaunch{Flags: []string{"--upload-interval=10ms"}}}}}}
	if err := cfg.fillDefaults(); err != nil {
		t.Fatal(err)
	}
	if got := cfg.Targets[0].Sediment.Flags; !slices.Equal(got, []string{"--upload-interval", "50ms", "--log-level", "info"}) {
		t.Errorf("sediment flags %q", got)
	}
	cl := cfg.Targets[1].Cluster.Sediment.Flags
	if got := uploadInterval(cl); got != 10*time.Millisecond {
		t.Errorf("cluster flags %q: upload interval %s, want the command line's 10ms", cl, got)
	}
	for _, tc := range []struct {
		flags []string
		want  time.Duration
	}{
		{nil, 250 * time.Millisecond},
		{[]string{"--upload-interval", "50ms"}, 50 * time.Millisecond},
		{[]string{"-upload-interval=1s", "--rack", "x"}, time.Second},
		{[]string{"--upload-interval"}, 250 * time.Millisecond},
		{[]string{"--rack", "upload-interval=1s"}, 250 * time.Millisecond},
	} {
		if got := uploadInterval(tc.flags); got != tc.want {
			t.Errorf("uploadInterval(%q) = %s, want %s", tc.flags, got, tc.want)
		}
	}
	if _, err := ParseWorkload([]byte("count: 1\nbroker_flags: [\"50ms\"]\n")); err == nil || !strings.Contains(err.Error(), "broker_flags") {
		t.Errorf("broker_flags not starting with a flag: %v", err)
	}
}

// TestClusterSmoke runs a workload on a launched cluster of one broker
// (one broker runs every part of the cluster target: the etcd process,
// its metrics, the bench's compaction) on a MinIO bucket, and checks the
// cluster figures and the report.
func TestClusterSmoke(t *testing.T) {
	t.Parallel()
	w, err := LoadWorkload("workloads/etcd-hour.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if w, err = (Overrides{Duration: 3 * time.Second, ProducerRate: 1000, Partitions: 4}).Apply(w); err != nil {
		t.Fatal(err)
	}
	spec := TargetSpec{Kind: "cluster", Cluster: ClusterLaunch{Brokers: 1, Sediment: SedimentLaunch{Bin: brokerBin}}}
	cfg := smokeConfig(t, w, spec)
	cfg.MinIO = true
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkReports(t, cfg.OutDir, res, 1)
	tr := res.Targets[0]
	// Object durability (a cluster's default) acknowledges after the PUT
	// and the commit: no WAL fsyncs to count.
	if b := tr.Broker; b == nil || b.Puts <= 0 || b.CPUSeconds <= 0 || b.PeakRSSBytes <= 0 || len(b.FetchReads) == 0 {
		t.Errorf("broker figures (the sum over the brokers): %+v", tr.Broker)
	}
	c := tr.Cluster
	if c == nil || len(c.Brokers) != 1 || c.Brokers[0].Rack != "r0" || c.Brokers[0].AppendedBytes <= 0 || c.Brokers[0].Objects <= 0 ||
		c.Brokers[0].Partitions != 40 || c.UploadRounds <= 0 || c.HourEquivalents <= 0 {
		t.Fatalf("cluster figure: %+v", c)
	}
	if c.EtcdReceivedBytes <= 0 || c.EtcdReceivedPerGB <= 0 || c.EtcdDBSize <= 0 || c.UploadIntervalSeconds != 0.05 || c.UploadIntervals <= 0 {
		t.Errorf("etcd figures: %+v", c)
	}
	if k := c.Compaction; k == nil || k.Revision <= 0 || k.DBSizeAfter <= 0 || k.Keys <= 0 || k.KeysPerPartition <= 0 {
		t.Errorf("compaction: %+v", c.Compaction)
	}
	for _, name := range []string{"broker-0-etcd.log", "broker-0-node-0.log"} {
		if _, err := os.Stat(filepath.Join(cfg.OutDir, name)); err != nil {
			t.Errorf("log: %v", err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(cfg.OutDir, SummaryFile))
	for _, want := range []string{"cluster:1: 1 broker(s) on one etcd", "| node 0 | r0 |", "per GB produced**", "After the bench compacted it"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
}
