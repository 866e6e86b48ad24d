package bench

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv"
	"github.com/sediment-io/sediment/storage/objectstore/localfs"
	"github.com/sediment-io/sediment/storage/partition"
)

// etcdHourPrefix is the key prefix the driver's log writes under.
const etcdHourPrefix = "hour"

// The bounds cmd/broker gives an object's commit on etcd (its
// etcdObjectPartitions and etcdObjectBatches), so that the commits here
// are the cluster's.
const (
	etcdHourObjectPartitions = 32
	etcdHourObjectBatches    = 8192
)

// variantRun is one variant of the driver: its etcd, its log, its
// partitions and its producers' sequence numbers.
type variantRun struct {
	cfg      EtcdHourConfig
	foldKeys int
	record   func(func(*EtcdHourVariant))

	etcd    *etcdProcess
	kv      *etcdkv.KV
	logFile *os.File // the storage code's warnings
	log     *partition.Log
	parts   []*partition.Partition
	pids    []int64
	seqs    [][]int32 // [producer][partition]: the next sequence number
	clock   atomic.Int64
	start   time.Time

	prevRev     int64 // the revision etcd's next compaction goes to
	compactions int
	maintained  int
}

func (v *variantRun) run(ctx context.Context) {
	v.record(func(r *EtcdHourVariant) { r.FoldKeys = v.foldKeys })
	if err := v.runErr(ctx); err != nil {
		v.progress("fold %d: %v", v.foldKeys, err)
		v.record(func(r *EtcdHourVariant) { r.Error = err.Error() })
	}
}

func (v *variantRun) progress(format string, args ...any) {
	if v.cfg.Progress != nil {
		v.cfg.Progress(fmt.Sprintf(format, args...))
	}
}

func (v *variantRun) runErr(ctx context.Context) error {
	tmp, err := os.MkdirTemp("", "sediment-etcdhour-")
	if err != nil {
		return fmt.Errorf("bench: etcd-hour: %w", err)
	}
	defer os.RemoveAll(tmp)
	v.etcd, err = startEtcd(ctx, filepath.Join(v.cfg.OutDir, fmt.Sprintf("etcd-fold-%d.log", v.foldKeys)))
	if err != nil {
		return err
	}
	defer v.etcd.stop()
	if err := v.open(ctx, tmp); err != nil {
		return err
	}
	defer v.close()
	if err := v.setup(ctx); err != nil {
		return err
	}
	done, err := v.rounds(ctx)
	// The end is measured even after an interruption or a failed round:
	// the rounds that ran are reported as what they are.
	endCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
	defer cancel()
	if ferr := v.finish(endCtx, done); err == nil {
		err = ferr
	}
	return err
}

// open connects to etcd as a broker does and opens the log on it, with
// the broker's defaults except: uploads and maintenance run when the
// rounds say (their wall-time tickers are set past the run), and the
// broker's clock is the rounds' (250 ms each).
func (v *variantRun) open(ctx context.Context, dir string) error {
	ecfg, err := etcdkv.ParseURL("etcd://" + v.etcd.endpoint + "/" + etcdHourPrefix)
	if err != nil {
		return err
	}
	if v.logFile, err = os.Create(filepath.Join(v.cfg.OutDir, fmt.Sprintf("log-fold-%d.txt", v.foldKeys))); err != nil {
		return fmt.Errorf("bench: etcd-hour: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(v.logFile, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if v.kv, err = etcdkv.Open(ctx, ecfg, logger); err != nil {
		return err
	}
	store, err := localfs.Open(filepath.Join(dir, "bucket"))
	if err != nil {
		return err
	}
	epoch := time.Now()
	v.log, err = partition.Open(ctx, partition.Options{
		Meta: metadata.NewStore(v.kv), Store: store, WALDir: filepath.Join(dir, "wal"),
		Durability: partition.DurabilityObject, NodeID: 1, Logger: logger,
		UploadInterval: 24 * time.Hour, MaintainInterval: 24 * time.Hour,
		IndexFoldKeys:       v.foldKeys,
		MaxObjectPartitions: etcdHourObjectPartitions, MaxObjectBatches: etcdHourObjectBatches,
		Now: func() time.Time { return epoch.Add(time.Duration(v.clock.Load()) * time.Millisecond) },
	})
	return err
}

func (v *variantRun) close() {
	if v.log != nil {
		v.log.Close()
	}
	if v.kv != nil {
		v.kv.Close()
	}
	if v.logFile != nil {
		v.logFile.Close()
	}
}

// setup creates the topics and the producers' ids, and notes the revision
// etcd's first compaction goes to, as etcdkv.Maintain's first pass does.
func (v *variantRun) setup(ctx context.Context) error {
	n, each := v.cfg.topics()
	for i := range n {
		t, err := v.log.CreateTopic(ctx, fmt.Sprintf("hour-%02d", i), int32(each), nil, false)
		if err != nil {
			return fmt.Errorf("bench: etcd-hour: create topic: %w", err)
		}
		v.parts = append(v.parts, t.Partitions()...)
	}
	ids := partition.NewProducerIDs(metadata.NewStore(v.kv))
	for range v.cfg.Producers {
		id, err := ids.Next(ctx)
		if err != nil {
			return err
		}
		v.pids = append(v.pids, id)
		v.seqs = append(v.seqs, make([]int32, len(v.parts)))
	}
	v.start = time.Now()
	return v.compactEtcd(ctx)
}

// rounds runs the rounds until the last, the context's end or MaxWall,
// with maintenance, etcd's compaction and checkpoints at their cadences.
// It returns how many rounds completed.
func (v *variantRun) rounds(ctx context.Context) (int, error) {
	c := v.cfg
	done := 0
	for r := 1; r <= c.Rounds; r++ {
		if ctx.Err() != nil || c.MaxWall > 0 && time.Since(v.start) >= c.MaxWall {
			break
		}
		v.clock.Store(int64(r) * roundMs)
		if err := v.round(ctx, r); err != nil {
			if ctx.Err() != nil {
				break // interrupted: the rounds done are the run
			}
			return done, fmt.Errorf("bench: etcd-hour: round %d: %w", r, err)
		}
		done = r
		if r%c.MaintainEvery == 0 {
			v.log.MaintainOnce(ctx, r%c.SweepEvery == 0)
			v.maintained++
		}
		if r%c.EtcdCompactEvery == 0 {
			if err := v.compactEtcd(ctx); err != nil {
				return done, err
			}
		}
		if r%c.CheckpointEvery == 0 && r < c.Rounds {
			if err := v.checkpoint(ctx, r); err != nil && ctx.Err() == nil {
				return done, err
			}
		}
	}
	return done, nil
}

// round writes one record to every partition, each from the producer
// whose turn it is, uploads and commits them, and checks every append is
// acknowledged.
func (v *variantRun) round(ctx context.Context, r int) error {
	res := make([]partition.AppendResult, len(v.parts))
	value := make([]byte, v.cfg.RecordBytes)
	ts := time.Now().UnixMilli()
	for i, p := range v.parts {
		prod := (r + i) % len(v.pids)
		b := producerBatch(v.pids[prod], v.seqs[prod][i], ts, value)
		var err error
		if res[i], err = v.log.Append(ctx, p, b); err != nil {
			return fmt.Errorf("append: %w", err)
		}
		if res[i].Duplicate {
			return fmt.Errorf("append to partition %d taken for a duplicate", i)
		}
		v.seqs[prod][i]++
	}
	if err := v.log.Flush(ctx); err != nil {
		return err
	}
	for i := range res {
		if err := v.log.Wait(ctx, res[i]); err != nil {
			return fmt.Errorf("wait: %w", err)
		}
	}
	return nil
}
