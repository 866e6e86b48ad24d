package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv"
)

// openMetadata opens the --metadata backend: the bbolt file in the data
// directory, or an etcd cluster. An etcd that does not answer yet is
// retried, with a log line each time, until ctx ends (SIGTERM at start-up):
// meanwhile /readyz answers 503.
func (b *broker) openMetadata(ctx context.Context, cfg *serveConfig, logger *slog.Logger) (metadata.KV, error) {
	if cfg.Metadata == "bbolt" {
		kv, err := metadata.OpenBolt(filepath.Join(cfg.DataDir, "meta.db"))
		if err != nil {
			return nil, err
		}
		b.bolt = kv
		return kv, nil
	}
	ecfg := cfg.etcd
	// Credentials come from the environment, never from the URL, which
	// is logged.
	ecfg.Username, ecfg.Password = os.Getenv("ETCD_USERNAME"), os.Getenv("ETCD_PASSWORD")
	logger.Info("metadata: connecting to etcd", "endpoints", ecfg.Endpoints, "prefix", ecfg.Prefix,
		"tls", ecfg.CACert != "" || ecfg.Cert != "", "auth", ecfg.Username != "")
	return etcdkv.Open(ctx, ecfg, logger)
}

// etcdObjectPartitions bounds the partitions of one object on etcd: its
// commit writes a partition state, an index entry and a producer delta
// (more chunks for a large one) per partition, plus the object's record,
// and etcd refuses a transaction of more than 128 operations by default.
const etcdObjectPartitions = 32

// etcdObjectBatches bounds the record batches of one object on etcd: its
// commit writes a producer delta of a few dozen bytes per batch, which at
// this bound stays well under etcd's 1.5 MiB request size however small the
// batches are (many idempotent producers writing one record at a time).
const etcdObjectBatches = 8192

// maxObjectBatches is partition.Options.MaxObjectBatches for the
// --metadata backend: bbolt has no bound on a transaction.
func maxObjectBatches(cfg *serveConfig) int {
	if cfg.Metadata == "bbolt" {
		return 0
	}
	return etcdObjectBatches
}

// maxObjectPartitions is partition.Options.MaxObjectPartitions for the
// --metadata backend: bbolt has no bound on a transaction.
func maxObjectPartitions(cfg *serveConfig) int {
	if cfg.Metadata == "bbolt" {
		return 0
	}
	return etcdObjectPartitions
}

// metaFailed is closed once the bbolt file failed to commit; it is nil
// (never ready) for etcd, which keeps its own durability.
func (b *broker) metaFailed() <-chan struct{} {
	if b.bolt == nil {
		return nil
	}
	return b.bolt.Failed()
}
