package table

import (
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/sediment-io/sediment/storage/record"
)

func benchRecord() []byte {
	head := `{"id":12345,"user":"user-345","at":"2026-11-29T21:00:00Z","tags":["a","b","c"],"geo":{"lat":45.5,"lon":-120.25},"ok":true,"pad":"`
	return []byte(head + strings.Repeat("x", 1024-len(head)-2) + `"}`)
}

func BenchmarkParseJSONObject(b *testing.B) {
	data := benchRecord()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := parseJSONObject(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConvertRow is one record's conversion into a buffered row (JSON
// parse, type checks, Arrow appends) with an inferred schema.
func BenchmarkConvertRow(b *testing.B) {
	data := benchRecord()
	st := iceberg.NewSchema(0, append(metadataFields(),
		iceberg.NestedField{ID: 100, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 101, Name: "user", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 102, Name: "at", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 103, Name: "tags", Type: &iceberg.ListType{ElementID: 104, Element: iceberg.PrimitiveTypes.String}},
		iceberg.NestedField{ID: 105, Name: "geo", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 106, Name: "lat", Type: iceberg.PrimitiveTypes.Float64}, {ID: 107, Name: "lon", Type: iceberg.PrimitiveTypes.Float64}}}},
		iceberg.NestedField{ID: 108, Name: "ok", Type: iceberg.PrimitiveTypes.Bool},
		iceberg.NestedField{ID: 109, Name: "pad", Type: iceberg.PrimitiveTypes.String})...)
	buf, err := newRowBuffer(st)
	if err != nil {
		b.Fatal(err)
	}
	defer buf.release()
	w := &worker{cfg: Config{Format: "json"}, buf: buf, conv: converter{infer: true}}
	b.SetBytes(int64(len(data)))
	for i := 0; b.Loop(); i++ {
		r := record.Record{Offset: int64(i), Timestamp: 1, Value: data}
		values, err := w.rowValues(0, r)
		if err != nil || len(w.conv.additions) > 0 {
			b.Fatal(err, w.conv.additions)
		}
		buf.append(values, int64(len(data)))
		if buf.rows == 10000 {
			buf.record().Release()
		}
	}
}
