//go:build interop

package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInteropBenchKafkaVsSediment runs a tiny workload with --vs
// sediment,kafka (Kafka fsyncing every write, as a fsync-for-fsync run
// would, after a short warm-up): both get every record through, Kafka's CPU and peak RSS come
// from /proc, its log is kept and its data dir is gone afterwards. It
// needs `make java-interop`.
func TestInteropBenchKafkaVsSediment(t *testing.T) {
	out := t.TempDir()
	cfg, err := ParseArgs([]string{"--workload", "workloads/max-throughput.yaml", "--vs", "sediment,kafka",
		"--count", "20000", "--partitions", "8", "--out", out, "--loopback", "100ms", "--quiet",
		"--kafka-prop", "log.flush.interval.messages=1", "--kafka-warmup", "3s"}, brokerBin, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Progress = testWriter{t}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := Run(ctx, *cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Targets) != 2 || res.Targets[1].Target != "kafka" {
		t.Fatalf("targets: %+v", res.Targets)
	}
	for _, tr := range res.Targets {
		if !tr.Complete || tr.Produced != 20000 || tr.Consumed != 20000 {
			t.Errorf("%s: complete %v, produced %d, consumed %d, errors %v", tr.Target, tr.Complete, tr.Produced, tr.Consumed, tr.Errors)
		}
	}
	k := res.Targets[1].Broker
	if k == nil || !k.ProcOnly || k.CPUSeconds <= 0 || k.PeakRSSBytes <= 0 || k.Puts != 0 || res.Targets[1].Cost != nil {
		t.Errorf("kafka's broker figures: %+v, cost %+v", k, res.Targets[1].Cost)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "kafka ran the workload live for 3s") {
		t.Errorf("no note of the warm-up: %q", res.Notes)
	}
	if _, ok := res.Targets[1].VsFirst["produce_mb_per_s"]; !ok {
		t.Errorf("no ratio of kafka over sediment: %v", res.Targets[1].VsFirst)
	}
	if st, err := os.Stat(filepath.Join(out, "broker-1.log")); err != nil || st.Size() == 0 {
		t.Errorf("kafka's log was not kept: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(out, "kafka-*")); len(left) != 0 {
		t.Errorf("kafka's directory was left behind: %v", left)
	}
	for _, f := range []string{ResultsFile, SummaryFile, VsPlot + ".svg"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("report: %v", err)
		}
	}
}
