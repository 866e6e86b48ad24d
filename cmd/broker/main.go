// Command broker is Sediment: a Kafka-compatible broker that keeps its log
// in object storage. `broker` alone (or `broker serve`) runs the broker with
// every default: Kafka on 127.0.0.1:9092, data in ./data.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/sediment-io/sediment/cmd/broker/admin"
)

const usage = `Sediment, a Kafka-compatible broker that keeps its log in object storage.

Usage:
  broker [serve] [flags]     run the broker (the default); broker serve -h lists the flags
  broker bench [flags]       run a benchmark workload (bench/workloads); broker bench -h lists the flags
  broker topics SUBCOMMAND   create|list|describe|delete|alter-config topics
  broker groups SUBCOMMAND   list|describe|reset-offsets|delete|delete-offsets consumer groups
  broker offsets SUBCOMMAND  get|commit a group's offsets (export, import)
  broker transactions SUBCOMMAND  list|describe|abort transactions (abort: a hanging one, KIP-664)
  broker producers describe  the producers of a partition and their open transactions
  broker cluster describe    brokers, controller, partition owners and epochs, coordinator shards (--metadata etcd://...)
  broker partitions takeover move a gone wal-mode broker's partitions by force (--from NODE --accept-loss)

Every flag is also an environment variable SEDIMENT_<FLAG> (--upload-bytes
is SEDIMENT_UPLOAD_BYTES) and a "flag = value" line in the --config file.
`

func main() {
	os.Exit(run(os.Args[1:]))
}

// run returns the process exit code: 0 ok, 1 a failed operation, 2 bad usage.
func run(args []string) int {
	cmd := "serve"
	if len(args) > 0 && !isFlag(args[0]) {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		cfg, err := parseServe(args, os.Getenv)
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "broker: %v\n", err)
			return 2
		}
		if err := serve(cfg); err != nil {
			fmt.Fprintf(os.Stderr, "broker: %v\n", err)
			return 1
		}
		return 0
	case "topics", "groups", "offsets", "transactions", "producers":
		return admin.Run(append([]string{cmd}, args...), os.Stdout, os.Stderr, os.Getenv)
	case "cluster":
		return runCluster(args, os.Stdout, os.Stderr)
	case "partitions":
		return runPartitions(args, os.Stdout, os.Stderr)
	case "bench":
		return runBench(args)
	case "help", "-h", "--help":
		fmt.Print(usage)
		return 0
	}
	fmt.Fprintf(os.Stderr, "broker: unknown command %q\n\n%s", cmd, usage)
	return 2
}

func isFlag(s string) bool { return len(s) > 0 && s[0] == '-' }
