package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/sediment-io/sediment/bench"
)

// runBench is `broker bench`: the benchmark suite against a launched or a
// running broker (see bench/README.md). The binary itself is the broker a
// `--launch sediment` run starts.
func runBench(args []string) int {
	if len(args) > 0 && args[0] == "etcd-hour" {
		return runEtcdHour(args[1:])
	}
	self, err := os.Executable()
	if err != nil {
		self = ""
	}
	cfg, err := bench.ParseArgs(args, self, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "broker: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := bench.Run(ctx, *cfg)
	if res != nil {
		fmt.Print(bench.SummaryText(res))
		fmt.Fprintf(os.Stderr, "reports in %s\n", cfg.OutDir)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "broker: %v\n", err)
		return 1
	}
	return 0
}

// runEtcdHour is `broker bench etcd-hour`: etcd's database after an
// hour-equivalent of uploads, driven through the storage code in upload
// rounds rather than through clients in wall time (see bench/README.md).
func runEtcdHour(args []string) int {
	cfg, err := bench.ParseEtcdHourArgs(args, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "broker: %v\n", err)
		return 2
	}
	cfg.Command = append([]string{"broker", "bench", "etcd-hour"}, args...)
	cfg.Progress = func(line string) { fmt.Fprintln(os.Stderr, line) }
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := bench.RunEtcdHour(ctx, *cfg)
	if res != nil {
		fmt.Print(res.Summary())
		fmt.Fprintf(os.Stderr, "reports in %s\n", cfg.OutDir)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "broker: %v\n", err)
		return 1
	}
	return 0
}
