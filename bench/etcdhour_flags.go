package bench

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// EtcdHourUsage introduces `broker bench etcd-hour`'s flags.
const EtcdHourUsage = `usage: broker bench etcd-hour [flags]

Runs the broker's storage (uploads, commits, maintenance) on a real etcd
for --rounds upload rounds of 250 ms each (14,400: an hour), one record per
partition per round, once per --fold-keys side by side, and reports etcd's
database size and live keys at checkpoints and after a final compaction
and defragmentation. Needs ./.bin/etcd (make .bin/etcd) or SEDIMENT_ETCD.

`

// ParseEtcdHourArgs parses `broker bench etcd-hour`'s flags.
func ParseEtcdHourArgs(args []string, stderr io.Writer) (*EtcdHourConfig, error) {
	cfg := DefaultEtcdHourConfig()
	fs := flag.NewFlagSet("broker bench etcd-hour", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, EtcdHourUsage); fs.PrintDefaults() }
	fs.IntVar(&cfg.Partitions, "partitions", cfg.Partitions, "partitions, written every round")
	fs.IntVar(&cfg.PartitionsPerTopic, "partitions-per-topic", cfg.PartitionsPerTopic, "partitions of each topic (a topic's creation is one etcd transaction of at most 128 operations)")
	fs.IntVar(&cfg.Rounds, "rounds", cfg.Rounds, "upload rounds (250 ms each at the broker's default: 14,400 an hour)")
	folds := fs.String("fold-keys", "1048576,64", "--index-fold-keys of the variants run side by side (1048576, the maximum: no fold)")
	fs.IntVar(&cfg.MaintainEvery, "maintain-every", cfg.MaintainEvery, "rounds between maintenance passes (--maintain-interval 30s)")
	fs.IntVar(&cfg.EtcdCompactEvery, "etcd-compact-every", cfg.EtcdCompactEvery, "rounds between etcd compactions (--etcd-compaction-interval 5m)")
	fs.IntVar(&cfg.SweepEvery, "sweep-every", cfg.SweepEvery, "rounds between orphan sweeps (--orphan-grace 1h / 4)")
	fs.IntVar(&cfg.CheckpointEvery, "checkpoint-every", cfg.CheckpointEvery, "rounds between checkpoints")
	fs.IntVar(&cfg.RecordBytes, "record-bytes", cfg.RecordBytes, "value bytes of each record")
	fs.IntVar(&cfg.Producers, "producers", cfg.Producers, "idempotent producers taking turns over the partitions")
	fs.DurationVar(&cfg.MaxWall, "max-wall", 0, "stop starting rounds after this long and report the rounds done (0: none)")
	fs.StringVar(&cfg.OutDir, "out", "bench/results/etcd-hour-driver", "directory of results.json and summary.md")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("bench: etcd-hour: unexpected arguments %q", fs.Args())
	}
	keys, err := parseFoldKeys(*folds)
	if err != nil {
		return nil, err
	}
	cfg.FoldKeys = keys
	return &cfg, cfg.check()
}

func parseFoldKeys(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 8 || n > 1<<20 {
			return nil, fmt.Errorf("bench: etcd-hour: --fold-keys %q: want a comma-separated list of 8..1048576", s)
		}
		out = append(out, n)
	}
	return out, nil
}
