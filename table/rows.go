package table

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	itable "github.com/apache/iceberg-go/table"
)

// rowBuffer holds the rows of one commit as Arrow builders for one table
// schema. Values were checked and converted before they get here
// (converter), so appending cannot fail.
type rowBuffer struct {
	schema *iceberg.Schema
	fields []iceberg.NestedField // the schema's top-level fields (Fields() copies them)
	data   *iceberg.StructType   // the fields after the metadata columns
	arrow  *arrow.Schema
	b      *array.RecordBuilder
	rows   int
	bytes  int64 // record bytes (key, value, headers) behind the rows
}

func newRowBuffer(schema *iceberg.Schema) (*rowBuffer, error) {
	sc, err := itable.SchemaToArrowSchema(schema, nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("table: arrow schema: %w", err)
	}
	fields := schema.Fields()
	return &rowBuffer{schema: schema, fields: fields, data: &iceberg.StructType{FieldList: fields[metaColumns:]},
		arrow: sc, b: array.NewRecordBuilder(memory.DefaultAllocator, sc)}, nil
}

// append adds one row: values[i] is the converted value of the schema's
// i-th top-level field (nil: null).
func (rb *rowBuffer) append(values []any, size int64) {
	for i, f := range rb.fields {
		appendValue(rb.b.Field(i), f.Type, values[i])
	}
	rb.rows++
	rb.bytes += size
}

// record returns the buffered rows as one Arrow record and empties the
// buffer; the caller releases the record.
func (rb *rowBuffer) record() arrow.RecordBatch {
	rec := rb.b.NewRecordBatch()
	rb.rows, rb.bytes = 0, 0
	return rec
}

func (rb *rowBuffer) release() { rb.b.Release() }

func appendValue(b array.Builder, t iceberg.Type, v any) {
	if v == nil {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.StructBuilder:
		st := t.(*iceberg.StructType)
		vals := v.([]any)
		b.Append(true)
		for i, f := range st.FieldList {
			appendValue(b.FieldBuilder(i), f.Type, vals[i])
		}
	case *array.ListBuilder:
		lt := t.(*iceberg.ListType)
		b.Append(true)
		for _, e := range v.([]any) {
			appendValue(b.ValueBuilder(), lt.Element, e)
		}
	default:
		appendPrimitive(b, v)
	}
}

func appendPrimitive(b array.Builder, v any) {
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.Int32Builder:
		b.Append(v.(int32))
	case *array.Int64Builder:
		b.Append(v.(int64))
	case *array.Float32Builder:
		b.Append(v.(float32))
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.BinaryBuilder:
		b.Append(v.([]byte))
	case *array.Date32Builder:
		b.Append(arrow.Date32(v.(int32)))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.(int64)))
	default:
		panic(fmt.Sprintf("table: no Arrow builder for %T", b)) // the converter only produces the types above
	}
}
