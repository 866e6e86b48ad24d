package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/bench"
	"github.com/sediment-io/sediment/interop/jvm"
)

// run is one target's produce then consume pass. The tools count MB as
// 2^20 bytes; MBps10 converts to the 10^6 bytes `broker bench` reports.
type run struct {
	Target   string         `json:"target"`
	Round    int            `json:"round"`
	Producer producerFigure `json:"producer"`
	Consumer consumerFigure `json:"consumer"`
	// Broker CPU seconds per 10^9 value bytes, in each phase, and its peak
	// RSS (VmHWM), from the target's /metrics or /proc.
	ProduceCPUPerGB float64 `json:"produce_cpu_seconds_per_gb,omitempty"`
	ConsumeCPUPerGB float64 `json:"consume_cpu_seconds_per_gb,omitempty"`
	PeakRSSBytes    float64 `json:"peak_rss_bytes,omitempty"`
}

// producerFigure is ProducerPerformance's closing line.
type producerFigure struct {
	Records       int64   `json:"records"`
	RecordsPerSec float64 `json:"records_per_s"`
	MiBPerSec     float64 `json:"mib_per_s"`
	MBPerSec      float64 `json:"mb_per_s"`
	AvgMs, MaxMs  float64
	P50Ms, P95Ms  float64
	P99Ms, P999Ms float64
	Line          string `json:"line"`
}

// consumerFigure is ConsumerPerformance's CSV line.
type consumerFigure struct {
	Records       int64   `json:"records"`
	RecordsPerSec float64 `json:"records_per_s"`
	MiBPerSec     float64 `json:"mib_per_s"`
	MBPerSec      float64 `json:"mb_per_s"`
	RebalanceMs   float64 `json:"rebalance_ms"`
	FetchMiBPerS  float64 `json:"fetch_mib_per_s"` // the rate without the group join
	Line          string  `json:"line"`
}

// measure launches the target, warms it up, runs both tools on a fresh
// topic and stops the target.
func measure(ctx context.Context, o options, spec bench.TargetSpec, round int) (run, error) {
	r := run{Target: spec.Label(), Round: round}
	cp, err := jvm.Classpath()
	if err != nil {
		return r, err
	}
	t, err := bench.Launch(ctx, spec)
	if err != nil {
		return r, err
	}
	defer t.Close()
	if o.warmup > 0 {
		if _, _, err := perfPass(ctx, cp, o, t.Bootstrap(), "kafkaperf-warmup", o.warmup); err != nil {
			return r, fmt.Errorf("warm-up: %w", err)
		}
	}
	gb := float64(o.records) * float64(o.recordSize) / 1e9
	var mid bench.Snapshot
	before, _, _ := t.Scrape(ctx)
	r.Producer, r.Consumer, err = perfPass(ctx, cp, o, t.Bootstrap(), "kafkaperf", o.records,
		func() { mid, _, _ = t.Scrape(ctx) })
	if err != nil {
		return r, err
	}
	after, ok, _ := t.Scrape(ctx)
	if ok && gb > 0 {
		r.ProduceCPUPerGB = (mid.CPUSeconds - before.CPUSeconds) / gb
		r.ConsumeCPUPerGB = (after.CPUSeconds - mid.CPUSeconds) / gb
		r.PeakRSSBytes = max(after.PeakRSS, after.RSSBytes)
	}
	return r, nil
}

// perfPass creates topic and runs ProducerPerformance then
// ConsumerPerformance for n records; between, if given, is called after
// the producer.
func perfPass(ctx context.Context, cp string, o options, addr, topic string, n int64, between ...func()) (producerFigure, consumerFigure, error) {
	if err := createTopic(ctx, addr, topic, o.partitions); err != nil {
		return producerFigure{}, consumerFigure{}, err
	}
	out, err := jvm.Run(ctx, cp, "org.apache.kafka.tools.ProducerPerformance", "--topic", topic,
		"--num-records", fmt.Sprint(n), "--record-size", fmt.Sprint(o.recordSize), "--throughput", "-1",
		"--producer-props", "bootstrap.servers="+addr, "acks="+o.acks)
	if err != nil {
		return producerFigure{}, consumerFigure{}, err
	}
	p, err := parseProducer(out.Stdout)
	if err != nil {
		return p, consumerFigure{}, err
	}
	for _, f := range between {
		f()
	}
	out, err = jvm.Run(ctx, cp, "org.apache.kafka.tools.ConsumerPerformance", "--bootstrap-server", addr,
		"--topic", topic, "--num-records", fmt.Sprint(n), "--timeout", "60000")
	if err != nil {
		return p, consumerFigure{}, err
	}
	c, err := parseConsumer(out.Stdout)
	return p, c, err
}

func createTopic(ctx context.Context, addr, topic string, partitions int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	_, err = kadm.NewClient(cl).CreateTopic(ctx, int32(partitions), 1, nil, topic)
	return err
}

// producerLine is ProducerPerformance's summary, e.g. "1000000 records
// sent, 52345.1 records/sec (51.12 MB/sec), 512.34 ms avg latency, 1500.00
// ms max latency, 480 ms 50th, 900 ms 95th, 1200 ms 99th, 1400 ms 99.9th."
var producerLine = regexp.MustCompile(`(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99.9th`)

func parseProducer(stdout string) (producerFigure, error) {
	m := producerLine.FindAllStringSubmatch(stdout, -1)
	if len(m) == 0 {
		return producerFigure{}, fmt.Errorf("no summary line in ProducerPerformance's output:\n%s", stdout)
	}
	last := m[len(m)-1]
	f := make([]float64, len(last))
	for i := 1; i < len(last); i++ {
		f[i], _ = strconv.ParseFloat(last[i], 64)
	}
	return producerFigure{Records: int64(f[1]), RecordsPerSec: f[2], MiBPerSec: f[3], MBPerSec: f[3] * (1 << 20) / 1e6,
		AvgMs: f[4], MaxMs: f[5], P50Ms: f[6], P95Ms: f[7], P99Ms: f[8], P999Ms: f[9], Line: last[0]}, nil
}

// parseConsumer reads the CSV line under ConsumerPerformance's header:
// start.time, end.time, data.consumed.in.MB, MB.sec,
// data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms,
// fetch.MB.sec, fetch.nMsg.sec.
func parseConsumer(stdout string) (consumerFigure, error) {
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	cols := strings.Split(last, ",")
	if len(cols) < 10 || strings.Contains(last, "start.time") {
		return consumerFigure{}, fmt.Errorf("no figures in ConsumerPerformance's output:\n%s", stdout)
	}
	f := make([]float64, len(cols))
	for i := 2; i < len(cols); i++ {
		f[i], _ = strconv.ParseFloat(strings.TrimSpace(cols[i]), 64)
	}
	return consumerFigure{Records: int64(f[4]), RecordsPerSec: f[5], MiBPerSec: f[3], MBPerSec: f[3] * (1 << 20) / 1e6,
		RebalanceMs: f[6], FetchMiBPerS: f[8], Line: last}, nil
}

// table prints the runs, one line each.
func table(runs []run) string {
	var b strings.Builder
	b.WriteString("| target | round | produce MB/s (rec/s) | produce latency avg / p50 / p99 / p99.9 / max ms | consume MB/s (rec/s) | consume MB/s without the group join | broker CPU s/GB produce / consume | peak RSS MiB |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, r := range runs {
		p, c := r.Producer, r.Consumer
		fmt.Fprintf(&b, "| %s | %d | %.1f (%.0f) | %.0f / %.0f / %.0f / %.0f / %.0f | %.1f (%.0f) | %.1f | %.1f / %.1f | %.0f |\n",
			r.Target, r.Round, p.MBPerSec, p.RecordsPerSec, p.AvgMs, p.P50Ms, p.P99Ms, p.P999Ms, p.MaxMs,
			c.MBPerSec, c.RecordsPerSec, c.FetchMiBPerS*(1<<20)/1e6, r.ProduceCPUPerGB, r.ConsumeCPUPerGB, r.PeakRSSBytes/(1<<20))
	}
	b.WriteString("MB = 10^6 bytes of record values (the tools print 2^20; converted).\n")
	return b.String()
}
