package etcdkv

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
)

// MaintainOptions configures Maintain.
type MaintainOptions struct {
	// Every is the interval between passes (default 5 minutes).
	Every time.Duration
	// Registry receives sediment_etcd_db_size_bytes and
	// sediment_etcd_db_size_in_use_bytes (nil: not registered).
	Registry prometheus.Registerer
	Logger   *slog.Logger
}

// Maintain runs until ctx ends. Each pass compacts etcd's MVCC history up
// to the revision the previous pass saw, so that history is kept for one
// interval (watchers that fall further behind re-read, which the cluster
// package does), and reports the database size of the first endpoint that
// answers. Every broker of a cluster may run it: a compaction to a
// revision already compacted is refused harmlessly. Without it etcd keeps
// every revision of every key, and an upload commit every 250 ms writes
// several keys per partition.
func (k *KV) Maintain(ctx context.Context, o MaintainOptions) {
	if o.Every <= 0 {
		o.Every = 5 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	size := prometheus.NewGauge(prometheus.GaugeOpts{Name: "sediment_etcd_db_size_bytes",
		Help: "Size of the etcd database file, as its first reachable endpoint reports it."})
	inUse := prometheus.NewGauge(prometheus.GaugeOpts{Name: "sediment_etcd_db_size_in_use_bytes",
		Help: "Bytes of the etcd database file in use (the rest is free after compaction, until a defragmentation)."})
	if o.Registry != nil {
		o.Registry.MustRegister(size, inUse)
	}
	t := time.NewTicker(o.Every)
	defer t.Stop()
	var prev int64
	for {
		rev := k.status(ctx, size, inUse)
		if prev > 0 {
			k.compact(ctx, prev, o.Logger)
		}
		if rev > 0 {
			prev = rev
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// status records the database sizes and returns the current revision (0
// when no endpoint answered).
func (k *KV) status(ctx context.Context, size, inUse prometheus.Gauge) int64 {
	for _, ep := range k.cli.Endpoints() {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		st, err := k.cli.Status(sctx, ep)
		cancel()
		if err != nil {
			continue
		}
		size.Set(float64(st.DbSize))
		inUse.Set(float64(st.DbSizeInUse))
		return st.Header.Revision
	}
	return 0
}

func (k *KV) compact(ctx context.Context, rev int64, lg *slog.Logger) {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err := k.cli.Compact(cctx, rev)
	if err != nil && err != rpctypes.ErrCompacted && ctx.Err() == nil {
		lg.Warn("etcd compaction failed; retried at the next pass", "revision", rev, "err", err)
	}
}
