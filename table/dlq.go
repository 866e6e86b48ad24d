package table

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/sediment-io/sediment/storage/partition"
	"github.com/sediment-io/sediment/storage/record"
)

// Dead-letter records keep the source record's key, value, timestamp and
// headers, and add these headers.
const (
	HeaderError           = "sediment.table.error"
	HeaderSourceTopic     = "sediment.table.source.topic"
	HeaderSourcePartition = "sediment.table.source.partition"
	HeaderSourceOffset    = "sediment.table.source.offset"
)

// DLQSuffix names a table topic's dead-letter topic: <topic>.dlq.
const DLQSuffix = ".dlq"

// reject handles a record that cannot be converted, per
// sediment.table.errors. The dead-letter append is durable before the
// table commit that moves past the record, so a record is never dropped;
// after a crash before that commit it may be dead-lettered twice.
func (w *worker) reject(ctx context.Context, part int32, r record.Record, cause error) error {
	switch w.cfg.Errors {
	case "skip":
		w.stats.skipped.Add(1)
		w.log.Warn("table record skipped", "table", w.name, "partition", part, "offset", r.Offset, "err", cause)
		return nil
	case "stop": // commit the rows before the record, so the table is exact up to it
		if w.pending() {
			if err := w.flush(ctx); err != nil {
				return err
			}
		}
		return fmt.Errorf("%w: partition %d offset %d: %v", errStopped, part, r.Offset, cause)
	}
	if err := w.deadLetter(ctx, part, r, cause); err != nil {
		return fmt.Errorf("table %s: dead-letter partition %d offset %d: %w", w.name, part, r.Offset, err)
	}
	w.stats.dlq.Add(1)
	w.log.Debug("table record dead-lettered", "table", w.name, "partition", part, "offset", r.Offset, "err", cause)
	return nil
}

func (w *worker) deadLetter(ctx context.Context, part int32, r record.Record, cause error) error {
	dlq, err := w.dlqTopic(ctx)
	if err != nil {
		return err
	}
	parts := dlq.Partitions()
	p := parts[int(part)%len(parts)]
	rec := record.Record{Timestamp: r.Timestamp, Key: r.Key, Value: r.Value,
		Headers: append(append([]record.Header(nil), r.Headers...),
			record.Header{Key: HeaderError, Value: []byte(cause.Error())},
			record.Header{Key: HeaderSourceTopic, Value: []byte(w.name)},
			record.Header{Key: HeaderSourcePartition, Value: []byte(strconv.Itoa(int(part)))},
			record.Header{Key: HeaderSourceOffset, Value: []byte(strconv.FormatInt(r.Offset, 10))})}
	actx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if w.c.opts.DeadLetter != nil {
		return w.c.opts.DeadLetter(actx, dlq.Name, p.Index(), rec)
	}
	res, err := w.c.opts.Log.Append(actx, p, record.EncodeBatch([]record.Record{rec}))
	if err != nil {
		return err
	}
	return w.c.opts.Log.Wait(actx, res)
}

// dlqTopic returns <topic>.dlq, creating it (one partition) if missing.
func (w *worker) dlqTopic(ctx context.Context) (*partition.Topic, error) {
	name := w.name + DLQSuffix
	if t, ok := w.c.opts.Log.Topic(name); ok {
		return t, nil
	}
	t, err := w.c.opts.Log.CreateTopic(ctx, name, 1, nil, false)
	if errors.Is(err, partition.ErrTopicExists) {
		if t, ok := w.c.opts.Log.Topic(name); ok {
			return t, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", name, err)
	}
	w.log.Info("dead-letter topic created", "topic", name)
	return t, nil
}
