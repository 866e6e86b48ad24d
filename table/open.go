package table

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/apache/iceberg-go"
	icebergcatalog "github.com/apache/iceberg-go/catalog"
	itable "github.com/apache/iceberg-go/table"
)

// TargetFileBytes is the Parquet file size the tables are created with
// (write.target-file-size-bytes); a commit of fewer rows writes smaller
// files.
const TargetFileBytes = 128 << 20

// open loads the table (creating it on first use), resumes from the
// current snapshot's offsets and starts an empty buffer.
func (w *worker) open(ctx context.Context) error {
	tbl, err := w.loadOrCreate(ctx)
	if err != nil {
		return err
	}
	w.tbl = tbl
	w.next = w.baseOffsets(tbl)
	if id := snapshotTopicID(tbl); id != "" && id != w.topic.ID.String() {
		w.log.Warn("the table's offsets belong to an earlier topic of the same name; converting this topic from its start",
			"table", w.name, "table_topic_id", id, "topic_id", w.topic.ID.String())
	}
	w.read = maps.Clone(w.next)
	w.guessed = map[int32]bool{}
	w.stats.setProgress(w.next)
	w.lastCommit = time.Now()
	if snap := tbl.CurrentSnapshot(); snap != nil {
		w.lastCommit = time.UnixMilli(snap.TimestampMs)
		w.stats.lastCommit.Store(snap.TimestampMs)
	}
	w.conv = converter{infer: w.cfg.Format == "json" && w.cfg.Schema == ""}
	if err := w.resetBuffer(); err != nil {
		return err
	}
	w.cleanOrphans(ctx)
	w.log.Info("table converter started", "table", w.name, "location", tbl.Location(), "resume", w.next)
	return nil
}

func (w *worker) loadOrCreate(ctx context.Context) (*itable.Table, error) {
	cat := w.c.opts.Catalog
	tbl, err := cat.LoadTable(ctx, w.ident)
	if err == nil {
		return tbl, nil
	}
	if !errors.Is(err, icebergcatalog.ErrNoSuchTable) {
		return nil, fmt.Errorf("table %s: load: %w", w.name, err)
	}
	schema, err := initialSchema(w.cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errConfig, err)
	}
	spec, err := partitionSpec(w.cfg.PartitionBy, schema)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errConfig, err)
	}
	props := iceberg.Properties{
		itable.WriteTargetFileSizeBytesKey: strconv.Itoa(TargetFileBytes),
		"sediment.topic":                   w.name,
		"sediment.format":                  w.cfg.Format,
	}
	tbl, err = cat.CreateTable(ctx, w.ident, schema,
		icebergcatalog.WithPartitionSpec(&spec), icebergcatalog.WithProperties(props))
	if errors.Is(err, icebergcatalog.ErrTableAlreadyExists) {
		return cat.LoadTable(ctx, w.ident)
	}
	if err != nil {
		return nil, fmt.Errorf("table %s: create: %w", w.name, err)
	}
	w.log.Info("table created", "table", w.name, "location", tbl.Location(), "partition_by", w.cfg.PartitionBy)
	return tbl, nil
}

// cleanOrphans deletes files under the table's location that no snapshot
// references and that are older than the grace: Parquet files written by a
// commit that never landed (a crash between the write and the catalog
// commit). The grace keeps the files of a commit in flight elsewhere.
func (w *worker) cleanOrphans(ctx context.Context) {
	if w.c.opts.OrphanGrace < 0 || w.tbl.CurrentSnapshot() == nil {
		return
	}
	res, err := w.tbl.DeleteOrphanFiles(ctx, itable.WithFilesOlderThan(w.c.opts.OrphanGrace))
	if err != nil {
		w.log.Warn("table orphan cleanup failed", "table", w.name, "err", err)
		return
	}
	if n := len(res.DeletedFiles); n > 0 {
		w.stats.orphans.Add(int64(n))
		w.log.Info("table orphan files deleted", "table", w.name, "files", n)
	}
}
