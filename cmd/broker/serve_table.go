package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"

	icebergcatalog "github.com/apache/iceberg-go/catalog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment-io/sediment/table"
	"github.com/sediment-io/sediment/table/catalog"
)

// tableConverter is the table topics' converter and the catalog it commits
// to.
type tableConverter struct {
	cat  icebergcatalog.Catalog
	conv *table.Converter
}

// startTables opens the --table-catalog and starts the converter of table
// topics.
func (b *broker) startTables(ctx context.Context, cfg *serveConfig, logger *slog.Logger, reg *prometheus.Registry) error {
	cat, err := catalog.Open(ctx, cfg.TableCatalog, catalog.Options{DataDir: cfg.DataDir, ObjectStoreURL: cfg.ObjectStore})
	if err != nil {
		return fmt.Errorf("--table-catalog: %w", err)
	}
	conv := table.Start(table.Options{Log: b.log, Catalog: cat, Logger: logger, Registry: reg,
		OrphanGrace: cfg.TableOrphans, BeforeCommit: crashBeforeTableCommit()})
	b.tables = &tableConverter{cat: cat, conv: conv}
	return nil
}

func (t *tableConverter) close() error {
	err := t.conv.Close()
	if c, ok := t.cat.(io.Closer); ok {
		err = errors.Join(err, c.Close())
	}
	return err
}

// crashBeforeTableCommit is a fault-injection seam for crash tests: with
// SEDIMENT_TEST_CRASH_BEFORE_TABLE_COMMIT=N the process kills itself with
// SIGKILL after the N-th table commit's Parquet files are written, before
// the catalog commit.
func crashBeforeTableCommit() func(string) {
	n, err := strconv.Atoi(os.Getenv("SEDIMENT_TEST_CRASH_BEFORE_TABLE_COMMIT"))
	if err != nil || n <= 0 {
		return nil
	}
	var commits atomic.Int64
	return func(tbl string) {
		if commits.Add(1) == int64(n) {
			slog.Warn("SEDIMENT_TEST_CRASH_BEFORE_TABLE_COMMIT: killing the process between the Parquet write and the catalog commit", "table", tbl)
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
}
