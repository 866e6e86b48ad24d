package bench

import (
	"bytes"
	"errors"
	"flag"
	"math"
	"strings"
	"testing"
	"time"
)

// TestParseWorkloadErrors: bad input is an error naming the field, never a
// panic or a silent default.
func TestParseWorkloadErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"", "give duration, count or backlog_bytes"},
		{"duration: 1s\npartitons: 3\n", "field partitons not found"},
		{"duration: 1s\npartitions: -1\n", "partitions: want 1..100000"},
		{"duration: 1s\nmessage_size: 8\n", "message_size"},
		{"duration: 1s\nrandom_share: 1.5\n", "random_share"},
		{"duration: 1s\nacks: 2\n", "acks"},
		{"duration: 1s\ncompression: brotli\n", "compression: unknown codec"},
		{"duration: 1s\npartitioner: hash\n", "partitioner"},
		{"duration: 1s\nbacklog_bytes: lots\n", "byte size"},
		{"duration: 1s\nwarmup: 2s\n", "warmup"},
		{"duration: 1s\npayload: json\nmessage_size: 32\n", "json payload needs at least 64"},
		{"duration: 1s\ntopic_config: {a: b}\noptional_topic_config: [c]\n", `"c" is not in topic_config`},
		{"duration: one second\n", "cannot unmarshal"},
		{"[1, 2]", "cannot unmarshal"},
	} {
		_, err := ParseWorkload([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error containing %q", tc.yaml, err, tc.want)
		}
	}
}

func TestParseWorkloadDefaults(t *testing.T) {
	w, err := ParseWorkload([]byte("count: 10\nbacklog_bytes: 2MiB\n"))
	if err != nil {
		t.Fatal(err)
	}
	if w.Topics != 1 || w.Partitions != 1 || w.MessageSize != 1024 || w.Acks != "all" ||
		w.BatchSize != 1<<20 || w.Compression != "none" || w.BacklogBytes != 2<<20 {
		t.Errorf("defaults: %+v", w)
	}
}

func TestOverrides(t *testing.T) {
	w, err := ParseWorkload([]byte("duration: 60s\nwarmup: 5s\npartitions: 100\n"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Overrides{Count: 500, Partitions: 7}.Apply(w)
	if err != nil {
		t.Fatal(err)
	}
	if got.Count != 500 || got.Duration != 0 || got.Warmup != 0 || got.Partitions != 7 || w.Partitions != 100 {
		t.Errorf("count override: %+v (original %+v)", got, w)
	}
	got, err = Overrides{Duration: 10 * time.Second}.Apply(w)
	if err != nil || got.Duration != 10*time.Second || got.Warmup != 5*time.Second {
		t.Errorf("duration override: %+v %v", got, err)
	}
}

// TestParseArgs: the command line's targets and overrides, and its
// errors.
func TestParseArgs(t *testing.T) {
	wl := "workloads/max-throughput.yaml"
	cfg, err := ParseArgs([]string{"--workload", wl, "--vs", "sediment,127.0.0.1:9092", "--duration", "3s",
		"--out", "x", "--broker-bin", "/bin/true", "--", "--upload-interval", "1s"}, "self", &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Targets) != 2 || cfg.Targets[0].Kind != "sediment" || cfg.Targets[1].Kind != "bootstrap" ||
		cfg.Targets[1].Addr != "127.0.0.1:9092" || cfg.Workload.Duration != 3*time.Second || cfg.OutDir != "x" {
		t.Errorf("config: %+v", cfg)
	}
	if f := cfg.Targets[0].Sediment; f.Bin != "/bin/true" || strings.Join(f.Flags, " ") != "--upload-interval 1s" {
		t.Errorf("sediment launch: %+v", f)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--launch", "kfake"}, "--workload FILE is required"},
		{[]string{"--workload", wl}, "exactly one of"},
		{[]string{"--workload", wl, "--launch", "redpanda"}, "want sediment, cluster, kafka or kfake"},
		{[]string{"--workload", wl, "--launch", "kfake", "--bootstrap", "h:1"}, "exactly one of"},
		{[]string{"--workload", wl, "--vs", "sediment"}, "want two to 4 targets"},
		{[]string{"--workload", wl, "--vs", "kfake,kfake"}, "given twice"},
		{[]string{"--workload", wl, "--vs", "sediment,nowhere"}, "want sediment, cluster, cluster:N, kafka, kfake or HOST:PORT"},
		{[]string{"--workload", wl, "--bootstrap", "kfake"}, "want HOST:PORT"},
		{[]string{"--workload", "nope.yaml", "--launch", "kfake"}, "no such file"},
		{[]string{"--workload", wl, "--launch", "kfake", "--backlog-bytes", "x"}, "--backlog-bytes"},
		{[]string{"--workload", wl, "--launch", "sediment", "--minio", "--object-store", "s3://b/p"}, "--minio and --object-store"},
		{[]string{"--workload", wl, "--launch", "kfake", "--partitions", "-3"}, "must not be negative"},
		{[]string{"--workload", wl, "--launch", "sediment", "--store-latency", "50ms"}, "--store-latency needs --minio"},
	} {
		_, err := ParseArgs(tc.args, "self", &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
	if _, err := ParseArgs([]string{"-h"}, "self", &bytes.Buffer{}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
}

// TestCostEstimate checks the arithmetic against a hand calculation.
func TestCostEstimate(t *testing.T) {
	b := &BrokerFigure{Puts: 60, PutsPerGB: 60, GetsPerGB: 300, ObjectBytesOut: 1.1e9, ObjectBytesIn: 1.2e9}
	prod := Rate{Records: 1e6, Bytes: 1e9}
	cons := Rate{Records: 1e6, Bytes: 1e9}
	c := estimateCost(b, 1e6, 1e6, prod, cons)
	const month = 730 * 3600.0 // GB in a month at 1 GB/s
	wantStd := 60*month*0.005/1000 + 300*month*0.0004/1000
	wantExp := 60*month*0.00113/1000 + 300*month*0.00003/1000 + 1.1*month*0.0032 + 1.2*month*0.0006
	wantDisk := 2 * 0.02 * month
	wantClients := wantDisk + 2.0/3*0.02*month*2
	for name, got := range map[string][2]float64{
		"standard": {c.S3Standard, wantStd}, "express": {c.S3Express, wantExp},
		"disk": {c.DiskReplica, wantDisk}, "clients": {c.DiskWithClients, wantClients},
	} {
		if math.Abs(got[0]-got[1]) > 1e-6*got[1] {
			t.Errorf("%s: %f, want %f", name, got[0], got[1])
		}
	}
	if estimateCost(&BrokerFigure{}, 1, 1, prod, cons) != nil {
		t.Error("a broker without object-store requests got a cost estimate")
	}
}

// TestParseMetrics reads Sediment's metric names from the text format.
func TestParseMetrics(t *testing.T) {
	text := `# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 12.5
# TYPE sediment_wal_fsyncs_total counter
sediment_wal_fsyncs_total 40
# TYPE sediment_objectstore_requests_total counter
sediment_objectstore_requests_total{backend="localfs",op="put",outcome="ok"} 7
sediment_objectstore_requests_total{backend="localfs",op="get_range",outcome="ok"} 3
sediment_objectstore_requests_total{backend="localfs",op="get",outcome="ok"} 2
sediment_objectstore_requests_total{backend="localfs",op="list",outcome="ok"} 9
# TYPE sediment_fetch_reads_total counter
sediment_fetch_reads_total{source="memory"} 90
sediment_fetch_reads_total{source="object"} 10
# TYPE sediment_table_lag_records gauge
sediment_table_lag_records{topic="t"} 17
`
	s, err := parseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if s.CPUSeconds != 12.5 || s.Fsyncs != 40 || s.Puts != 7 || s.Gets != 5 || s.Table[`sediment_table_lag_records{topic="t"}`] != 17 ||
		s.FetchReads["memory"] != 90 || s.FetchReads["object"] != 10 || sources(s.FetchReads) != "memory 90%, object 10%" {
		t.Errorf("snapshot: %+v", s)
	}
	if _, err := parseMetrics(strings.NewReader("garbage{ 1\n")); err == nil {
		t.Error("bad metrics text parsed")
	}
}

func TestLoopback(t *testing.T) {
	lb, err := MeasureLoopback(50 * time.Millisecond)
	if err != nil || lb.Bytes <= 0 || lb.MBPerSec <= 0 {
		t.Fatalf("%+v %v", lb, err)
	}
}

func TestJSONPayload(t *testing.T) {
	for _, size := range []int{64, 100, 4096} {
		v := jsonPayload(size, 12, 1<<40)
		if len(v) != size || !strings.HasPrefix(string(v), `{"producer":12,"seq":1099511627776,"pad":"`) || !strings.HasSuffix(string(v), `"}`) {
			t.Errorf("size %d: %q", size, v)
		}
	}
}

// TestTableLag: the lag samples of every table add up to the run's table
// lag; other table metrics do not count.
func TestTableLag(t *testing.T) {
	b := &brokerSums{rounds: 1, table: map[string]float64{
		`sediment_table_lag_offsets{table="a"}`: 10,
		`sediment_table_lag_offsets{table="b"}`: 5,
		`sediment_table_rows_total{table="a"}`:  1000,
	}}
	if got := b.figure(TargetResult{}).TableLag; got != 15 {
		t.Errorf("table lag %g, want 15", got)
	}
}
