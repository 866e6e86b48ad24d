package bench

import (
	"bytes"
	"context"
	"maps"
	"strings"
	"testing"
	"time"
)

// TestKafkaParseArgs: kafka as a --launch and --vs target, mixed with the
// others, and --kafka-prop given to every kafka target.
func TestKafkaParseArgs(t *testing.T) {
	wl := "workloads/max-throughput.yaml"
	cfg, err := ParseArgs([]string{"--workload", wl, "--vs", "sediment,kafka,kfake", "--out", "x",
		"--kafka-prop", "log.flush.interval.messages=1", "--kafka-prop", " num.io.threads = 4 "}, "self", &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, s := range cfg.Targets {
		kinds = append(kinds, s.Kind)
	}
	if strings.Join(kinds, ",") != "sediment,kafka,kfake" {
		t.Fatalf("targets: %v", kinds)
	}
	want := map[string]string{"log.flush.interval.messages": "1", "num.io.threads": "4"}
	if got := cfg.Targets[1].Kafka.Props; !maps.Equal(got, want) || cfg.Targets[1].Label() != "kafka" ||
		cfg.Targets[1].Kafka.Warmup != 20*time.Second {
		t.Errorf("kafka spec: %+v, want props %v", cfg.Targets[1], want)
	}
	if cfg.Targets[0].Kafka.Props != nil || cfg.Targets[2].Kafka.Props != nil {
		t.Errorf("kafka props reached other targets: %+v", cfg.Targets)
	}
	cfg.Rounds = 0
	if err := cfg.fillDefaults(); err != nil || cfg.Rounds != 2 {
		t.Errorf("three targets: rounds %d, err %v; want 2", cfg.Rounds, err)
	}

	cfg, err = ParseArgs([]string{"--workload", wl, "--launch", "kafka", "--kafka-warmup", "0", "--out", "x"}, "self", &bytes.Buffer{})
	if err != nil || len(cfg.Targets) != 1 || cfg.Targets[0].Kind != "kafka" || len(cfg.Targets[0].Kafka.Props) != 0 ||
		cfg.Targets[0].Kafka.Warmup != 0 {
		t.Fatalf("--launch kafka: %+v %v", cfg, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--launch", "kafka", "--kafka-prop", "novalue"}, "want KEY=VALUE"},
		{[]string{"--launch", "kafka", "--kafka-prop", "=1"}, "want KEY=VALUE"},
		{[]string{"--launch", "sediment", "--kafka-prop", "a=b"}, "without a kafka target"},
		{[]string{"--vs", "sediment,kafka,kafka"}, "given twice"},
		{[]string{"--vs", "a:1,b:2,c:3,d:4,kafka"}, "want two to 4 targets"},
	} {
		_, err := ParseArgs(append([]string{"--workload", wl}, tc.args...), "self", &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

// TestKafkaTargetSpec: "kafka" is a target of its own, not a host name.
func TestKafkaTargetSpec(t *testing.T) {
	s, err := ParseTargetSpec(" kafka ", SedimentLaunch{Bin: "b"})
	if err != nil || s.Kind != "kafka" || s.Addr != "" || s.Sediment.Bin != "" {
		t.Errorf("kafka: %+v %v", s, err)
	}
	s, err = ParseTargetSpec("kafka:9092", SedimentLaunch{})
	if err != nil || s.Kind != "bootstrap" || s.Label() != "kafka:9092" {
		t.Errorf("kafka:9092 is a running broker: %+v %v", s, err)
	}
}

// TestKafkaMissingClasspath: without java the launch fails with jvm's
// message saying what to install and run.
func TestKafkaMissingClasspath(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("SEDIMENT_JAVA_CLASSPATH", "")
	_, err := Launch(context.Background(), TargetSpec{Kind: "kafka", Kafka: KafkaLaunch{Parent: t.TempDir()}})
	if err == nil || !strings.Contains(err.Error(), "bench: launch kafka: jvm:") || !strings.Contains(err.Error(), "make java-interop") {
		t.Fatalf("got %v, want jvm's error naming make java-interop", err)
	}
}

// TestKafkaProcStat reads the CPU time out of /proc/PID/stat lines,
// including a command name with spaces and parentheses, and this
// process's own.
func TestKafkaProcStat(t *testing.T) {
	line := "4242 (java (x) y) S 1 4242 4242 0 -1 4194560 123 0 0 0 250 75 0 0 20 0 42 0 100 0 0"
	if got, err := parseStatCPU(line); err != nil || got != 3.25 {
		t.Errorf("parseStatCPU: %v %v, want 3.25", got, err)
	}
	if _, err := parseStatCPU("12 (x) S 1 2"); err == nil {
		t.Error("a short line parsed")
	}
	if _, err := parseStatCPU("no parenthesis at all"); err == nil {
		t.Error("a line without a command name parsed")
	}
	if _, err := processCPUSeconds(1 << 30); err == nil {
		t.Error("a missing pid read")
	}
}

// TestKafkaReport: a /proc-only broker figure shows CPU and RSS and dashes
// for what it cannot measure, and every target after the first gets its
// ratios over the first.
func TestKafkaReport(t *testing.T) {
	w, err := LoadWorkload("workloads/max-throughput.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res := &Results{Workload: w, Rounds: 2, Targets: []TargetResult{
		{Target: "sediment", Produce: Rate{MBPerSec: 50}, Broker: &BrokerFigure{CPUSecondsPerGB: 10, PeakRSSBytes: 400 << 20, PutsPerGB: 50}},
		{Target: "kafka", Produce: Rate{MBPerSec: 100}, Broker: &BrokerFigure{ProcOnly: true, CPUSecondsPerGB: 5, PeakRSSBytes: 1 << 30}},
		{Target: "kfake", Produce: Rate{MBPerSec: 200}},
	}}
	setRatios(res)
	if res.Targets[1].VsFirst["produce_mb_per_s"] != 2 || res.Targets[1].VsFirst["cpu_seconds_per_gb"] != 0.5 ||
		res.Targets[2].VsFirst["produce_mb_per_s"] != 4 || res.Ratios["produce_mb_per_s"] != 2 {
		t.Errorf("ratios: %v / %v / %v", res.Targets[1].VsFirst, res.Targets[2].VsFirst, res.Ratios)
	}
	md := Markdown(res)
	for _, want := range []string{"| kafka | 5.0 | 1.0 GiB | — | — | — | — |", "kafka over sediment: ",
		"kfake over sediment: ", "`vs.svg`"} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
	if err := WritePlots(t.TempDir(), res); err != nil {
		t.Errorf("plots of three targets: %v", err)
	}
}
