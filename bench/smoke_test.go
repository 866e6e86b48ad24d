package bench

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// brokerBin is cmd/broker built once for the package's tests.
var brokerBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "bench-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	brokerBin = filepath.Join(dir, "broker")
	build := exec.Command("go", "build", "-o", brokerBin, "github.com/sediment-io/sediment/cmd/broker")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "bench tests: building cmd/broker: %v\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// smokeOverrides shrink each shipped workload to a few seconds.
var smokeOverrides = map[string]Overrides{
	"max-throughput":     {Count: 20000},
	"fixed-rate-latency": {Duration: 2 * time.Second, ProducerRate: 2000},
	"catch-up-read":      {BacklogBytes: 8 << 20},
	"many-partitions":    {Duration: 2 * time.Second, ProducerRate: 2000},
	"table-topic":        {Duration: 2 * time.Second, ProducerRate: 1000},
	"etcd-hour":          {Duration: 2 * time.Second, ProducerRate: 2000, Partitions: 5},
	"failover":           {Duration: 2 * time.Second, ProducerRate: 1000},
	"transactions":       {Duration: 2 * time.Second, ProducerRate: 2000},
	"transactions-max":   {Count: 20000},
}

// smokeConfig is a short run of w against targets, reports into a temp dir.
func smokeConfig(t *testing.T, w *Workload, targets ...TargetSpec) Config {
	t.Helper()
	return Config{Workload: w, Targets: targets, OutDir: t.TempDir(), LoopbackDuration: 100 * time.Millisecond,
		SampleInterval: 250 * time.Millisecond, DrainTimeout: time.Minute, Progress: testWriter{t}}
}

func sedimentSpec() TargetSpec {
	return TargetSpec{Kind: "sediment", Sediment: SedimentLaunch{Bin: brokerBin}}
}

// TestWorkloadsSmoke runs every shipped workload, shrunk, against a
// launched Sediment and against kfake, and checks the reports.
func TestWorkloadsSmoke(t *testing.T) {
	files, err := filepath.Glob("workloads/*.yaml")
	if err != nil || len(files) < 5 {
		t.Fatalf("workloads: %v %v", files, err)
	}
	for _, f := range files {
		w, err := LoadWorkload(f)
		if err != nil {
			t.Fatal(err)
		}
		ov, ok := smokeOverrides[w.Name]
		if !ok {
			t.Fatalf("%s: no smoke overrides for workload %q: add it to smokeOverrides", f, w.Name)
		}
		if w, err = ov.Apply(w); err != nil {
			t.Fatal(err)
		}
		for _, spec := range []TargetSpec{sedimentSpec(), {Kind: "kfake"}} {
			t.Run(w.Name+"/"+spec.Kind, func(t *testing.T) {
				// Runs wait on pacers and drains more than on the CPU;
				// nothing here is timed, so they may share it.
				t.Parallel()
				cfg := smokeConfig(t, w, spec)
				res, err := Run(context.Background(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				checkReports(t, cfg.OutDir, res, 1)
				if spec.Kind == "sediment" {
					checkBroker(t, res.Targets[0])
				}
				if w.Transactions != nil {
					checkTxn(t, res.Targets[0])
				}
			})
		}
	}
}

// TestVsSmoke runs two targets alternately and checks the side-by-side
// report.
func TestVsSmoke(t *testing.T) {
	t.Parallel()
	w, err := LoadWorkload("workloads/fixed-rate-latency.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if w, err = (Overrides{Duration: 2 * time.Second, ProducerRate: 2000}).Apply(w); err != nil {
		t.Fatal(err)
	}
	cfg := smokeConfig(t, w, sedimentSpec(), TargetSpec{Kind: "kfake"})
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkReports(t, cfg.OutDir, res, 2)
	if res.Rounds != 2 {
		t.Errorf("rounds = %d, want 2 by default with two targets", res.Rounds)
	}
	for _, name := range []string{VsPlot + ".png", VsPlot + ".svg"} {
		checkImage(t, filepath.Join(cfg.OutDir, name))
	}
	if _, ok := res.Ratios["produce_mb_per_s"]; !ok {
		t.Errorf("no produce ratio in %v", res.Ratios)
	}
}

// TestBootstrapTarget measures a broker someone else started.
func TestBootstrapTarget(t *testing.T) {
	t.Parallel()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w, err := ParseWorkload([]byte("name: tiny\npartitions: 3\ncount: 3000\nproducers: 2\nconsumers: 2\nmessage_size: 100\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := smokeConfig(t, w, TargetSpec{Kind: "bootstrap", Addr: c.ListenAddrs()[0]})
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkReports(t, cfg.OutDir, res, 1)
	if got := res.Targets[0].Produced; got != 3000 {
		t.Errorf("produced %d records, want the count 3000", got)
	}
	if res.Targets[0].Broker != nil {
		t.Errorf("broker figures for a target without --metrics: %+v", res.Targets[0].Broker)
	}
	// The reports can be drawn again from results.json alone.
	for _, name := range []string{SummaryFile, ThroughputPlot + ".png", LatencyPlot + ".svg"} {
		os.Remove(filepath.Join(cfg.OutDir, name))
	}
	if _, err := Run(context.Background(), Config{Rerender: cfg.OutDir}); err != nil {
		t.Fatal(err)
	}
	checkReports(t, cfg.OutDir, res, 1)
	if _, err := Rerender(t.TempDir()); err == nil {
		t.Error("rerender of an empty directory succeeded")
	}
}

// TestMinIOSmoke launches Sediment on a MinIO bucket (--minio) and checks
// that object-store requests were counted.
func TestMinIOSmoke(t *testing.T) {
	t.Parallel()
	w, err := LoadWorkload("workloads/catch-up-read.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if w, err = (Overrides{BacklogBytes: 8 << 20}).Apply(w); err != nil {
		t.Fatal(err)
	}
	cfg := smokeConfig(t, w, sedimentSpec())
	cfg.MinIO = true
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkReports(t, cfg.OutDir, res, 1)
	checkBroker(t, res.Targets[0])
	log, _ := os.ReadFile(filepath.Join(cfg.OutDir, "broker-0.log"))
	if strings.Contains(string(log), "file://") {
		t.Errorf("broker log mentions a local bucket:\n%s", log)
	}
}

// checkReports checks what every run must leave behind.
func checkReports(t *testing.T, dir string, res *Results, targets int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	var got Results
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("results.json: %v", err)
	}
	if len(got.Targets) != targets || got.Schema != ResultsSchema || got.Loopback.MBPerSec <= 0 {
		t.Fatalf("results.json: %d targets (want %d), schema %d, loopback %v", len(got.Targets), targets, got.Schema, got.Loopback)
	}
	for _, tr := range got.Targets {
		if tr.Produced == 0 || tr.Produced != tr.Consumed || !tr.Complete {
			t.Errorf("%s: produced %d, consumed %d, complete %v, errors %v", tr.Target, tr.Produced, tr.Consumed, tr.Complete, tr.Errors)
		}
		if tr.Produce.MBPerSec <= 0 || tr.Consume.MBPerSec <= 0 {
			t.Errorf("%s: produce %+v consume %+v", tr.Target, tr.Produce, tr.Consume)
		}
		if tr.EndToEnd.Count == 0 || len(tr.EndToEnd.Curve) == 0 {
			t.Errorf("%s: no end-to-end latency recorded", tr.Target)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil || !strings.Contains(string(md), "# "+res.Workload.Name) {
		t.Errorf("summary.md: %v\n%s", err, md)
	}
	for _, name := range []string{ThroughputPlot, LatencyPlot} {
		checkImage(t, filepath.Join(dir, name+".png"))
		checkImage(t, filepath.Join(dir, name+".svg"))
	}
}

// checkBroker checks the figures read from a launched Sediment's metrics.
func checkBroker(t *testing.T, tr TargetResult) {
	t.Helper()
	b := tr.Broker
	if b == nil {
		t.Fatalf("%s: no broker figures", tr.Target)
	}
	if b.Puts <= 0 || b.CPUSeconds <= 0 || b.PeakRSSBytes <= 0 || b.FsyncsPerSec <= 0 || len(b.FetchReads) == 0 {
		t.Errorf("%s: broker figures %+v", tr.Target, b)
	}
	if tr.Cost == nil || tr.Cost.S3Standard <= 0 || tr.Cost.DiskReplica <= 0 {
		t.Errorf("%s: cost %+v", tr.Target, tr.Cost)
	}
}

// checkImage decodes a PNG or parses an SVG as XML.
func checkImage(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if strings.HasSuffix(path, ".png") {
		img, err := png.Decode(f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
			t.Errorf("%s: %v is too small for a plot", path, b)
		}
		return
	}
	dec := xml.NewDecoder(f)
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Errorf("%s: root element %q, want svg", path, root)
	}
}

// testWriter sends progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestNoGoroutineLeak: a run leaves none of its goroutines (sampler,
// progress, producers, consumers) behind.
func TestNoGoroutineLeak(t *testing.T) {
	w, err := ParseWorkload([]byte("name: leak\npartitions: 2\ncount: 500\nmessage_size: 64\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := smokeConfig(t, w, TargetSpec{Kind: "kfake"})
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	var leaked []string
	for range 100 {
		if leaked = benchGoroutines(); len(leaked) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%d goroutines left after the run:\n%s", len(leaked), strings.Join(leaked, "\n\n"))
}

// benchGoroutines returns the stacks of live goroutines running this
// package's code, other than the tests'.
func benchGoroutines() []string {
	buf := make([]byte, 4<<20)
	var out []string
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "sediment-io/sediment/bench.") && !strings.Contains(g, "testing.tRunner") {
			out = append(out, g)
		}
	}
	return out
}
