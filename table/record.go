package table

import (
	"context"
	"errors"
	"fmt"

	"github.com/sediment-io/sediment/storage/record"
)

// add converts one record and buffers its row. A new field evolves the
// schema first; a record that cannot be converted is rejected per
// sediment.table.errors.
func (w *worker) add(ctx context.Context, part int32, r record.Record) error {
	values, err := w.rowValues(part, r)
	if err == nil && len(w.conv.additions) > 0 {
		if err := w.evolve(ctx); err != nil {
			return err
		}
		values, err = w.rowValues(part, r)
		if err == nil && len(w.conv.additions) > 0 {
			err = unconvertible("the schema did not take the record's new fields")
		}
	}
	if errors.Is(err, ErrUnconvertible) {
		return w.reject(ctx, part, r, err)
	}
	if err != nil {
		return err
	}
	w.buf.append(values, recordSize(r))
	return nil
}

// rowValues converts r to the values of the buffer's schema, noting new
// fields in w.conv.additions.
func (w *worker) rowValues(part int32, r record.Record) ([]any, error) {
	w.conv.additions = w.conv.additions[:0]
	values := make([]any, 0, len(w.buf.fields))
	values = append(values, part, r.Offset, r.Timestamp*1000, bytesOrNil(r.Key), headerValues(r.Headers))
	if w.cfg.Format == "raw" {
		return append(values, bytesOrNil(r.Value)), nil
	}
	obj, err := parseJSONObject(r.Value)
	if err != nil {
		return nil, err
	}
	dv, err := w.conv.structValue(nil, w.buf.data, obj)
	if err != nil {
		return nil, err
	}
	return append(values, dv...), nil
}

func headerValues(hs []record.Header) any {
	if len(hs) == 0 {
		return nil
	}
	out := make([]any, len(hs))
	for i, h := range hs {
		out[i] = []any{h.Key, bytesOrNil(h.Value)}
	}
	return out
}

// bytesOrNil keeps a null key or value null (an untyped nil).
func bytesOrNil(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

func recordSize(r record.Record) int64 {
	n := len(r.Key) + len(r.Value) + 24
	for _, h := range r.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return int64(n)
}

// evolve commits the rows buffered so far under the old schema, then adds
// the new fields as optional columns in a schema update commit, and
// continues with a buffer of the new schema.
func (w *worker) evolve(ctx context.Context) error {
	adds := append([]addition(nil), w.conv.additions...)
	if w.buf.rows > 0 {
		if err := w.flush(ctx); err != nil {
			return err
		}
	}
	tx := w.tbl.NewTransaction()
	upd := tx.UpdateSchema(true, false)
	for _, a := range adds {
		upd = upd.AddColumn(a.path, a.typ, "", false, nil)
	}
	if err := upd.Commit(); err != nil {
		return fmt.Errorf("table %s: schema update: %w", w.name, err)
	}
	tbl, err := tx.Commit(ctx)
	if err != nil {
		return fmt.Errorf("table %s: schema update commit: %w", w.name, err)
	}
	w.tbl = tbl
	w.log.Info("table schema evolved", "table", w.name, "columns", describeAdditions(adds))
	return w.resetBuffer()
}

func describeAdditions(adds []addition) []string {
	out := make([]string, len(adds))
	for i, a := range adds {
		out[i] = dotted(a.path) + " " + a.typ.String()
	}
	return out
}

// resetBuffer starts an empty buffer for the table's current schema.
func (w *worker) resetBuffer() error {
	buf, err := newRowBuffer(w.tbl.Schema())
	if err != nil {
		return err
	}
	w.release()
	w.buf = buf
	return nil
}
