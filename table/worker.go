package table

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	itable "github.com/apache/iceberg-go/table"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/partition"
	"github.com/sediment-io/sediment/storage/record"
)

// worker converts one table topic. It is the table's single owner inside
// the broker: it alone reads the topic for the table, buffers rows and
// commits; every field below is its own (stats is shared with readers).
type worker struct {
	c     *Converter
	topic *partition.Topic
	name  string
	ident itable.Identifier
	cfg   Config
	log   *slog.Logger
	stats *tableStats
	// fence is the table slot's fence the worker runs under (a cluster);
	// commitToken is held by a commit in flight (see ReleaseTable).
	fence       metadata.Cond
	commitToken chan struct{}

	tbl  *itable.Table
	next map[int32]int64 // next offset per partition in the current snapshot
	read map[int32]int64 // next offset to read; rows in [next, read) are buffered
	// guessed: partitions whose start is the local log start, as no
	// snapshot records them; a read below the real log start is no loss.
	guessed map[int32]bool
	buf     *rowBuffer
	conv    converter

	lastCommit time.Time
}

// readBytes bounds one partition read.
const readBytes = 1 << 20

// errStopped ends a worker under sediment.table.errors=stop; errConfig
// ends it when its configs cannot make a table (a changed config restarts
// it).
var (
	errStopped = errors.New("table: converter stopped by sediment.table.errors=stop")
	errConfig  = errors.New("table: the topic's sediment.table.* configs cannot make a table")
	// errTopicDeleted ends a worker whose topic is gone; the supervisor
	// forgets it at its next look at the topics.
	errTopicDeleted = errors.New("table: topic deleted")
)

// run converts until ctx ends, reopening the table after failures.
func (w *worker) run(ctx context.Context) {
	defer w.release()
	for ctx.Err() == nil {
		err := w.open(ctx)
		if err == nil {
			w.stats.setState("running", "")
			err = w.loop(ctx)
		}
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errTopicDeleted) {
			w.log.Info("table topic deleted: its converter stops; the table stays in the catalog", "table", w.name)
			w.stats.setState("stopped", err.Error())
			<-ctx.Done()
			return
		}
		if errors.Is(err, errNotOwner) {
			w.log.Warn("table converter stops: the table's slot moved to another broker", "table", w.name)
			w.stats.setState("stopped", err.Error())
			<-ctx.Done()
			return
		}
		if errors.Is(err, errStopped) || errors.Is(err, errConfig) {
			w.log.Error("table converter stopped", "table", w.name, "err", err)
			w.stats.setState("stopped", err.Error())
			<-ctx.Done()
			return
		}
		if !errors.Is(err, errResync) {
			w.log.Error("table converter failed; retrying", "table", w.name, "err", err)
			w.stats.setState("error", err.Error())
			sleep(ctx, w.c.opts.RetryInterval)
		}
	}
}

func (w *worker) release() {
	if w.buf != nil {
		w.buf.release()
		w.buf = nil
	}
}

// loop reads everything below the last stable offsets, commits when the
// interval has passed or the buffer is full, and waits for more.
func (w *worker) loop(ctx context.Context) error {
	wake := make(chan struct{}, 1)
	defer func() {
		for _, p := range w.topic.Partitions() {
			p.StopNotify(wake)
		}
	}()
	for {
		parts := w.topic.Partitions()
		for _, p := range parts {
			p.Notify(wake) // before reading: a later append wakes us
		}
		if err := w.convertAvailable(ctx, parts); err != nil {
			if w.topicGone() {
				return errTopicDeleted
			}
			return err
		}
		if err := w.maybeCommit(ctx, false); err != nil {
			return err
		}
		w.updateLag(parts)
		timer := time.NewTimer(w.untilNextPass())
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-wake:
		case <-timer.C:
		}
		timer.Stop()
		if w.topicGone() {
			return errTopicDeleted
		}
	}
}

// topicGone says whether the worker's topic was deleted (and perhaps
// created again under its name: another topic, another worker).
func (w *worker) topicGone() bool {
	t, ok := w.c.opts.Log.Topic(w.name)
	return !ok || t.ID != w.topic.ID
}

// pending says whether anything awaits a commit: rows, or offsets moved
// past records that went to the dead-letter topic or were skipped.
func (w *worker) pending() bool {
	return w.buf.rows > 0 || !maps.Equal(w.read, w.next)
}

// untilNextPass bounds the wait for appends: in a cluster the partitions
// owned by other brokers never notify, so the worker looks again every
// PollInterval.
func (w *worker) untilNextPass() time.Duration {
	d := w.untilCommit()
	if w.c.opts.Cluster != nil {
		d = min(d, w.c.opts.PollInterval)
	}
	return d
}

func (w *worker) untilCommit() time.Duration {
	if !w.pending() {
		return w.cfg.CommitInterval
	}
	return max(time.Until(w.lastCommit.Add(w.cfg.CommitInterval)), time.Millisecond)
}

// maybeCommit commits what is pending when the commit interval has passed,
// or at once when full (the buffer reached sediment.table.commit.bytes).
func (w *worker) maybeCommit(ctx context.Context, full bool) error {
	if !w.pending() {
		return nil
	}
	if !full && time.Since(w.lastCommit) < w.cfg.CommitInterval {
		return nil
	}
	return w.flush(ctx)
}

// flush commits what is buffered.
func (w *worker) flush(ctx context.Context) error {
	var rec arrow.RecordBatch
	if w.buf.rows > 0 {
		rec = w.buf.record()
		defer rec.Release()
	}
	err := w.commit(ctx, rec)
	if errors.Is(err, errResync) {
		w.log.Warn("table offsets moved by another writer; buffered rows dropped", "table", w.name)
	}
	return err
}

// convertAvailable reads each partition up to its last stable offset.
func (w *worker) convertAvailable(ctx context.Context, parts []*partition.Partition) error {
	for _, p := range parts {
		if err := w.convertPartition(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

func (w *worker) convertPartition(ctx context.Context, p *partition.Partition) error {
	idx := p.Index()
	if _, ok := w.read[idx]; !ok { // a new partition, or a table created on an old topic
		logStart, _ := p.Offsets()
		w.read[idx] = logStart
		w.guessed[idx] = true
	}
	for ctx.Err() == nil {
		from := w.read[idx]
		res, err := w.readAt(ctx, p, from)
		if errors.Is(err, partition.ErrOffsetOutOfRange) && res.LogStartOffset > from {
			if !w.guessed[idx] {
				w.log.Warn("records deleted by retention before they were converted", "table", w.name,
					"partition", idx, "from", from, "to", res.LogStartOffset)
				w.stats.lost.Add(res.LogStartOffset - from)
			}
			w.read[idx] = res.LogStartOffset
			continue
		}
		if err != nil {
			return fmt.Errorf("table %s: read partition %d at %d: %w", w.name, idx, from, err)
		}
		if from >= res.LastStableOffset {
			return nil // the rest is in an open transaction, or not written yet
		}
		batches, err := res.WholeBatches()
		if err != nil {
			return fmt.Errorf("table %s: read partition %d at %d: %w", w.name, idx, from, err)
		}
		if len(batches) == 0 {
			return nil
		}
		delete(w.guessed, idx)
		if err := w.convertBatches(ctx, idx, batches, res.Aborted); err != nil {
			return err
		}
		if w.read[idx] == from { // nothing at or past the position: never spin
			return fmt.Errorf("table %s: partition %d: a read at %d returned no record at or past it", w.name, idx, from)
		}
	}
	return ctx.Err()
}

// readAt reads p's committed records from offset, as a read_committed
// consumer (Options.Read, or the log's own ReadCommitted).
func (w *worker) readAt(ctx context.Context, p *partition.Partition, offset int64) (partition.FetchResult, error) {
	if w.c.opts.Read != nil {
		return w.c.opts.Read(ctx, p, offset, readBytes, true)
	}
	return w.c.opts.Log.ReadCommitted(ctx, p, offset, readBytes, true)
}

// convertBatches converts the records of batches from the read position
// on. Transaction markers and aborted transactions' batches make no rows:
// the read position moves past them, and the next commit records it.
func (w *worker) convertBatches(ctx context.Context, idx int32, batches [][]byte, aborted []partition.AbortedTxn) error {
	for _, raw := range batches {
		if !committedBatch(raw, aborted) {
			w.read[idx] = max(w.read[idx], record.LastOffset(raw)+1)
			continue
		}
		err := record.Decode(raw, func(r record.Record) error {
			if r.Offset < w.read[idx] {
				return nil
			}
			if err := w.add(ctx, idx, r); err != nil {
				return err
			}
			w.read[idx] = r.Offset + 1
			return nil
		})
		if err != nil {
			return err
		}
		if err := w.maybeCommit(ctx, w.buf.bytes >= w.cfg.CommitBytes); err != nil {
			return err
		}
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
