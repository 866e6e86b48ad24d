package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// The etcd-hour driver measures what an hour of uploads leaves in etcd
// without clients or brokers in between: it runs the broker's own storage
// (storage/partition.Log: its uploader, its commits and its maintenance,
// with the index fold, compaction and retention) on a real etcd process,
// and counts time in upload rounds rather than in wall time. Each round
// writes one small record to every partition and uploads and commits them
// (Log.Flush), as the broker does every --upload-interval (250 ms), so an
// hour is 14,400 rounds however long this machine takes for them. The
// broker's wall-time cadences are expressed in rounds: maintenance every
// 30 s is every 120 rounds, etcd's compaction every 5 minutes every 1,200.

// roundMs is the broker's default upload interval, which one round stands
// for.
const roundMs = 250

// roundsPerHour is an hour of upload rounds at the default interval.
const roundsPerHour = 3600 * 1000 / roundMs

// EtcdHourConfig configures RunEtcdHour.
type EtcdHourConfig struct {
	Partitions         int `json:"partitions"`
	PartitionsPerTopic int `json:"partitions_per_topic"` // at most etcd's 128 operations of a topic's creation
	Rounds             int `json:"rounds"`
	// FoldKeys are the --index-fold-keys of the variants, run side by
	// side, each on its own etcd.
	FoldKeys []int `json:"index_fold_keys"`
	// MaintainEvery and EtcdCompactEvery are the broker's
	// --maintain-interval and --etcd-compaction-interval in rounds;
	// SweepEvery its orphan sweep (every --orphan-grace/4, 15 minutes).
	MaintainEvery    int `json:"maintain_every_rounds"`
	EtcdCompactEvery int `json:"etcd_compact_every_rounds"`
	SweepEvery       int `json:"orphan_sweep_every_rounds"`
	CheckpointEvery  int `json:"checkpoint_every_rounds"`
	RecordBytes      int `json:"record_bytes"`
	// Producers is how many idempotent producers write, round-robin over
	// the partitions, as the clients of etcd-hour.yaml do.
	Producers int `json:"producers"`
	// MaxWall stops starting rounds after that long (0: none); what ran is
	// reported as what it is.
	MaxWall time.Duration `json:"max_wall_ns,omitempty"`
	OutDir  string        `json:"-"`
	Command []string      `json:"-"`
	// Progress receives a line per checkpoint (nil: none).
	Progress func(string) `json:"-"`
}

// DefaultEtcdHourConfig is the hour at 1,000 partitions, without the fold
// (its maximum, 2^20 keys) beside the default fold.
func DefaultEtcdHourConfig() EtcdHourConfig {
	return EtcdHourConfig{
		Partitions: 1000, PartitionsPerTopic: 100, Rounds: roundsPerHour,
		FoldKeys:      []int{1 << 20, 64},
		MaintainEvery: 30 * 1000 / roundMs, EtcdCompactEvery: 5 * 60 * 1000 / roundMs,
		SweepEvery: 15 * 60 * 1000 / roundMs, CheckpointEvery: 600,
		RecordBytes: 100, Producers: 2,
	}
}

func (c *EtcdHourConfig) check() error {
	switch {
	case c.Partitions <= 0 || c.PartitionsPerTopic <= 0 || c.PartitionsPerTopic > 128:
		return errors.New("bench: etcd-hour: want --partitions > 0 and --partitions-per-topic in 1..128 (etcd's operations in a topic's creation)")
	case c.Partitions > c.PartitionsPerTopic && c.Partitions%c.PartitionsPerTopic != 0:
		return fmt.Errorf("bench: etcd-hour: --partitions %d is no multiple of --partitions-per-topic %d", c.Partitions, c.PartitionsPerTopic)
	case c.Rounds <= 0 || c.MaintainEvery <= 0 || c.EtcdCompactEvery <= 0 || c.SweepEvery <= 0 || c.CheckpointEvery <= 0:
		return errors.New("bench: etcd-hour: rounds and every cadence must be > 0")
	case len(c.FoldKeys) == 0:
		return errors.New("bench: etcd-hour: no --fold-keys variant")
	case c.RecordBytes <= 0 || c.Producers <= 0:
		return errors.New("bench: etcd-hour: want --record-bytes and --producers > 0")
	case c.OutDir == "":
		return errors.New("bench: etcd-hour: --out is required")
	}
	return nil
}

// topics returns how many topics of how many partitions make Partitions.
func (c *EtcdHourConfig) topics() (n, each int) {
	if c.Partitions <= c.PartitionsPerTopic {
		return 1, c.Partitions
	}
	return c.Partitions / c.PartitionsPerTopic, c.PartitionsPerTopic
}

// RunEtcdHour runs every variant side by side, each on its own etcd, and
// writes OUT/results.json and OUT/summary.md at every checkpoint and at
// the end. A variant that fails is reported with its error; the others
// run on.
func RunEtcdHour(ctx context.Context, cfg EtcdHourConfig) (*EtcdHourResults, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	res := newEtcdHourResults(cfg)
	var mu sync.Mutex // guards res while variants record into it
	save := func() error {
		mu.Lock()
		defer mu.Unlock()
		return res.write(cfg.OutDir)
	}
	if err := save(); err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	for i, keys := range cfg.FoldKeys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := &variantRun{cfg: cfg, foldKeys: keys, record: func(f func(*EtcdHourVariant)) {
				mu.Lock()
				f(&res.Variants[i])
				mu.Unlock()
				if err := save(); err != nil && cfg.Progress != nil {
					cfg.Progress(err.Error())
				}
			}}
			v.run(ctx)
		}()
	}
	wg.Wait()
	res.finish()
	if err := res.write(cfg.OutDir); err != nil {
		return res, err
	}
	return res, res.err()
}
