package table

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	itable "github.com/apache/iceberg-go/table"
)

// Exactly once: every snapshot the converter commits carries, in its
// summary, the next offset to convert of every partition
// (sediment.next-offset.<partition> = offset). The table is the only place
// progress lives, so a snapshot and the offsets it covers are committed
// atomically by the catalog. A converter starts from the current
// snapshot's summary; rows written but not committed are invisible and
// their files are orphans (deleted at start, see cleanOrphans).
const nextOffsetProp = "sediment.next-offset."

// topicIDProp names, in each snapshot's summary, the topic (by id) whose
// offsets it records: a topic deleted and created again under the same
// name starts over from its first offset.
const topicIDProp = "sediment.topic-id"

// snapshotTopicID is the topic id the current snapshot's offsets belong to
// ("" for a new table or one written before ids were recorded).
func snapshotTopicID(tbl *itable.Table) string {
	if snap := tbl.CurrentSnapshot(); snap != nil && snap.Summary != nil {
		return snap.Summary.Properties[topicIDProp]
	}
	return ""
}

// offsetsOf reads the next offsets from the table's current snapshot
// (none: the table is new).
func offsetsOf(tbl *itable.Table) map[int32]int64 {
	out := map[int32]int64{}
	snap := tbl.CurrentSnapshot()
	if snap == nil || snap.Summary == nil {
		return out
	}
	for k, v := range snap.Summary.Properties {
		p, ok := strings.CutPrefix(k, nextOffsetProp)
		if !ok {
			continue
		}
		part, err1 := strconv.ParseInt(p, 10, 32)
		off, err2 := strconv.ParseInt(v, 10, 64)
		if err1 == nil && err2 == nil {
			out[int32(part)] = off
		}
	}
	return out
}

// baseOffsets are the next offsets of this worker's topic in tbl's current
// snapshot: none when the snapshot belongs to an earlier topic of the
// same name.
func (w *worker) baseOffsets(tbl *itable.Table) map[int32]int64 {
	if id := snapshotTopicID(tbl); id != "" && id != w.topic.ID.String() {
		return map[int32]int64{}
	}
	return offsetsOf(tbl)
}

func offsetProps(offsets map[int32]int64) iceberg.Properties {
	props := iceberg.Properties{}
	for p, off := range offsets {
		props[nextOffsetProp+strconv.Itoa(int(p))] = strconv.FormatInt(off, 10)
	}
	return props
}

// errResync says another writer moved the table's offsets: what was
// buffered is dropped and conversion resumes from the table's offsets.
var errResync = errors.New("table: the table's offsets moved under the converter; resuming from them")

const commitAttempts = 5

// commit appends rec (nil: no rows, only progress) with the read offsets
// as one snapshot. On a conflict or an unknown outcome it reloads the table
// and decides from the offsets there: ours (the commit landed), the ones
// we started from (retry on fresh metadata), or others (errResync).
//
// In a cluster the commit holds the worker's commit token (ReleaseTable
// waits for it) and checks the table slot's fence right before the catalog
// commit; a failed check returns errNotOwner at once, never retried.
func (w *worker) commit(ctx context.Context, rec arrow.RecordBatch) error {
	select {
	case w.commitToken <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-w.commitToken }()
	if err := ctx.Err(); err != nil {
		return err // released while waiting for the token
	}
	target := maps.Clone(w.read)
	var err error
	for range commitAttempts {
		var tbl *itable.Table
		if tbl, err = w.commitOnce(ctx, rec, target); err == nil {
			w.committed(tbl, target, rec)
			return nil
		}
		if errors.Is(err, errNotOwner) || errors.Is(err, errResync) {
			return err
		}
		fresh, lerr := w.c.opts.Catalog.LoadTable(ctx, w.ident)
		if lerr != nil {
			return fmt.Errorf("table %s: commit: %w (reload: %v)", w.name, err, lerr)
		}
		got := w.baseOffsets(fresh)
		switch {
		case maps.Equal(got, target):
			w.committed(fresh, target, rec)
			return nil
		case !maps.Equal(got, w.next):
			w.tbl, w.next, w.read = fresh, got, maps.Clone(got)
			return errResync
		}
		w.log.Warn("table commit failed; retrying on fresh metadata", "table", w.name, "err", err)
		w.stats.retries.Add(1)
		w.tbl = fresh
	}
	return fmt.Errorf("table %s: commit failed %d times: %w", w.name, commitAttempts, err)
}

func (w *worker) commitOnce(ctx context.Context, rec arrow.RecordBatch, target map[int32]int64) (*itable.Table, error) {
	// The rows cover [next, target) of each partition: the snapshot the
	// transaction builds on (asserted below) must record exactly next.
	// Else the worker reopens the table (errResync).
	if !maps.Equal(w.baseOffsets(w.tbl), w.next) {
		return nil, errResync
	}
	tx := w.tbl.NewTransaction()
	if err := tx.AssertRefSnapshotID(itable.MainBranch); err != nil {
		return nil, err
	}
	props := offsetProps(target)
	props[topicIDProp] = w.topic.ID.String()
	var err error
	if rec == nil {
		err = tx.AddFiles(ctx, nil, props, false)
	} else {
		rdr, rerr := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
		if rerr != nil {
			return nil, rerr
		}
		err = tx.Append(ctx, rdr, props)
		rdr.Release()
	}
	if err != nil {
		return nil, fmt.Errorf("write: %w", err)
	}
	if w.c.opts.BeforeCommit != nil {
		w.c.opts.BeforeCommit(w.name)
	}
	if err := w.checkFence(); err != nil {
		return nil, err
	}
	return tx.Commit(ctx)
}

// committed records a successful commit.
func (w *worker) committed(tbl *itable.Table, target map[int32]int64, rec arrow.RecordBatch) {
	w.tbl, w.next = tbl, target
	w.lastCommit = time.Now()
	var rows int64
	if rec != nil {
		rows = rec.NumRows()
	}
	files := int64(0)
	if snap := tbl.CurrentSnapshot(); snap != nil && snap.Summary != nil {
		files, _ = strconv.ParseInt(snap.Summary.Properties["added-data-files"], 10, 64)
	}
	w.stats.committed(rows, files, w.lastCommit)
	w.stats.setProgress(target)
	w.log.Debug("table commit", "table", w.name, "rows", rows, "files", files)
}
