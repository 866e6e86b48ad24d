// Command kafkaperf is a second opinion on `broker bench`: Kafka's own
// kafka-producer-perf-test and kafka-consumer-perf-test (the
// ProducerPerformance and ConsumerPerformance classes of the pinned
// interop/java project, run as the shell scripts run them) against a
// launched Sediment and a launched Apache Kafka, one after the other on
// the same machine, with both figures printed side by side.
//
// Run from the repository root after `make build java-interop`:
//
//	go run ./bench/kafkaperf [-records 1000000] [-kafka-prop log.flush.interval.messages=1] [-out FILE.json]
//
// Timings are printed, never asserted.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/sediment-io/sediment/bench"
)

// options are kafkaperf's flags.
type options struct {
	brokerBin  string
	targets    string
	records    int64
	warmup     int64
	recordSize int
	partitions int
	acks       string
	rounds     int
	out        string
	kafkaProps map[string]string
}

// report is what -out writes: the setup and every run's figures.
type report struct {
	Started    time.Time         `json:"started"`
	Command    []string          `json:"command"`
	Machine    bench.Machine     `json:"machine"`
	Records    int64             `json:"records"`
	Warmup     int64             `json:"warmup_records"`
	RecordSize int               `json:"record_size"`
	Partitions int               `json:"partitions"`
	Acks       string            `json:"acks"`
	KafkaProps map[string]string `json:"kafka_props,omitempty"`
	Runs       []run             `json:"runs"`
}

func main() {
	o := options{kafkaProps: map[string]string{}}
	flag.StringVar(&o.brokerBin, "broker-bin", ".bin/broker", "the Sediment broker binary (make build)")
	flag.StringVar(&o.targets, "targets", "sediment,kafka", "targets run one after the other: sediment, kafka, kfake or HOST:PORT")
	flag.Int64Var(&o.records, "records", 1_000_000, "records produced, then consumed, per run")
	flag.Int64Var(&o.warmup, "warmup-records", 200_000, "records produced and consumed, unmeasured, on a topic of their own before each run (warms a JVM broker's JIT; the same for every target)")
	flag.IntVar(&o.recordSize, "record-size", 1024, "record value size in bytes")
	flag.IntVar(&o.partitions, "partitions", 8, "partitions of the perf topic")
	flag.StringVar(&o.acks, "acks", "all", "the producer's acks")
	flag.IntVar(&o.rounds, "rounds", 1, "runs per target, in alternating order (A B, B A, ...)")
	flag.StringVar(&o.out, "out", "", "also write the figures as JSON to this file")
	flag.Func("kafka-prop", "KEY=VALUE for the launched kafka's server.properties, repeatable",
		func(kv string) error { return bench.ParseKafkaProp(o.kafkaProps, kv) })
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := runAll(ctx, o); err != nil {
		fmt.Fprintf(os.Stderr, "kafkaperf: %v\n", err)
		os.Exit(1)
	}
}

// runAll runs every round against every target and prints (and writes)
// the figures.
func runAll(ctx context.Context, o options) error {
	var specs []bench.TargetSpec
	for _, name := range strings.Split(o.targets, ",") {
		s, err := bench.ParseTargetSpec(name, bench.SedimentLaunch{Bin: o.brokerBin})
		if err != nil {
			return err
		}
		s.Kafka.Props = o.kafkaProps
		specs = append(specs, s)
	}
	rep := &report{Started: time.Now().UTC(), Command: append([]string{"kafkaperf"}, os.Args[1:]...),
		Machine: bench.DescribeMachine(), Records: o.records, Warmup: o.warmup, RecordSize: o.recordSize,
		Partitions: o.partitions, Acks: o.acks, KafkaProps: o.kafkaProps}
	for n := range max(o.rounds, 1) {
		for k := range specs {
			i := k
			if n%2 == 1 {
				i = len(specs) - 1 - k
			}
			r, err := measure(ctx, o, specs[i], n+1)
			if err != nil {
				return fmt.Errorf("%s round %d: %w", specs[i].Label(), n+1, err)
			}
			rep.Runs = append(rep.Runs, r)
		}
	}
	fmt.Print(table(rep.Runs))
	if o.out == "" {
		return nil
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(o.out, append(b, '\n'), 0o644)
}
