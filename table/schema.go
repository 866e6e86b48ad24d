package table

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
)

// The metadata columns every table topic's table starts with.
const (
	colPartition = "_kafka_partition"
	colOffset    = "_kafka_offset"
	colTimestamp = "_kafka_timestamp"
	colKey       = "_kafka_key"
	colHeaders   = "_kafka_headers"
	colValue     = "value" // the raw format's value column
	metaColumns  = 5
)

// headersType is _kafka_headers: a list of (key, value) in record order,
// duplicates kept (a map would lose them).
func headersType(firstID int) *iceberg.ListType {
	return &iceberg.ListType{ElementID: firstID, ElementRequired: true, Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
		{ID: firstID + 1, Name: "key", Type: iceberg.PrimitiveTypes.String, Required: true},
		{ID: firstID + 2, Name: "value", Type: iceberg.PrimitiveTypes.Binary},
	}}}
}

func metadataFields() []iceberg.NestedField {
	return []iceberg.NestedField{
		{ID: 1, Name: colPartition, Type: iceberg.PrimitiveTypes.Int32, Required: true},
		{ID: 2, Name: colOffset, Type: iceberg.PrimitiveTypes.Int64, Required: true},
		{ID: 3, Name: colTimestamp, Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
		{ID: 4, Name: colKey, Type: iceberg.PrimitiveTypes.Binary},
		{ID: 5, Name: colHeaders, Type: headersType(6)},
	}
}

// initialSchema is the schema a new table is created with: the metadata
// columns, then the value's columns (format raw: one binary column; format
// json: those of sediment.table.schema, or none when they are inferred).
// Ids are renumbered by the catalog on creation.
func initialSchema(cfg Config) (*iceberg.Schema, error) {
	fields := metadataFields()
	switch {
	case cfg.Format == "raw":
		fields = append(fields, iceberg.NestedField{ID: 100, Name: colValue, Type: iceberg.PrimitiveTypes.Binary})
	case cfg.Schema != "":
		var user iceberg.Schema
		if err := json.Unmarshal([]byte(cfg.Schema), &user); err != nil {
			return nil, fmt.Errorf("sediment.table.schema: %w", err)
		}
		shifted, err := iceberg.AssignFreshSchemaIDs(&user, counterFrom(100))
		if err != nil {
			return nil, fmt.Errorf("sediment.table.schema: %w", err)
		}
		if err := checkSupported(shifted.AsStruct()); err != nil {
			return nil, fmt.Errorf("sediment.table.schema: %w", err)
		}
		fields = append(fields, shifted.Fields()...)
	}
	return iceberg.NewSchema(0, fields...), nil
}

func counterFrom(n int) func() int {
	return func() int { n++; return n }
}

// checkSupported rejects types the converter cannot fill from JSON.
func checkSupported(st iceberg.StructType) error {
	for _, f := range st.FieldList {
		switch t := f.Type.(type) {
		case *iceberg.StructType:
			if err := checkSupported(*t); err != nil {
				return err
			}
		case *iceberg.ListType:
			if err := checkSupported(iceberg.StructType{FieldList: []iceberg.NestedField{t.ElementField()}}); err != nil {
				return err
			}
		case iceberg.BooleanType, iceberg.Int32Type, iceberg.Int64Type, iceberg.Float32Type, iceberg.Float64Type,
			iceberg.StringType, iceberg.BinaryType, iceberg.DateType, iceberg.TimestampType, iceberg.TimestampTzType:
		default:
			return fmt.Errorf("field %s: type %s is not supported by table topics", f.Name, f.Type)
		}
	}
	return nil
}

// partitionSpec builds the spec of sediment.table.partition-by against
// schema.
func partitionSpec(value string, schema *iceberg.Schema) (iceberg.PartitionSpec, error) {
	fields, err := ParsePartitionBy(value)
	if err != nil {
		return iceberg.PartitionSpec{}, fmt.Errorf("sediment.table.partition-by: %w", err)
	}
	var out []iceberg.PartitionField
	for i, f := range fields {
		src, ok := schema.FindFieldByName(f.Column)
		if !ok {
			return iceberg.PartitionSpec{}, fmt.Errorf("sediment.table.partition-by: column %q is not in the table's schema"+
				" (partitioning by a value column needs sediment.table.schema)", f.Column)
		}
		if insideCollection(schema, f.Column) {
			return iceberg.PartitionSpec{}, fmt.Errorf("sediment.table.partition-by: column %q is inside a list or map", f.Column)
		}
		tr := transform(f)
		if !tr.CanTransform(src.Type) {
			return iceberg.PartitionSpec{}, fmt.Errorf("sediment.table.partition-by: %s cannot apply to %s of type %s", tr, f.Column, src.Type)
		}
		name := partitionFieldName(f)
		out = append(out, iceberg.PartitionField{SourceIDs: []int{src.ID}, FieldID: 1000 + i, Name: sanitize(name), Transform: tr})
	}
	return iceberg.NewPartitionSpec(out...), nil
}

// partitionFieldName names a partition field as Iceberg's Java API does
// (col, col_day, ...), with the parameter added for bucket and truncate.
func partitionFieldName(f PartitionField) string {
	switch f.Transform {
	case "identity":
		return f.Column
	case "bucket":
		return fmt.Sprintf("%s_bucket_%d", f.Column, f.Param)
	case "truncate":
		return fmt.Sprintf("%s_trunc_%d", f.Column, f.Param)
	}
	return f.Column + "_" + f.Transform
}

// insideCollection says whether a dotted column path runs through a list
// or a map, which Iceberg cannot partition by.
func insideCollection(schema *iceberg.Schema, column string) bool {
	parts := strings.Split(column, ".")
	for i := 1; i < len(parts); i++ {
		f, ok := schema.FindFieldByName(strings.Join(parts[:i], "."))
		if !ok {
			continue
		}
		switch f.Type.(type) {
		case *iceberg.ListType, *iceberg.MapType:
			return true
		}
	}
	return false
}

func transform(f PartitionField) iceberg.Transform {
	switch f.Transform {
	case "year":
		return iceberg.YearTransform{}
	case "month":
		return iceberg.MonthTransform{}
	case "day":
		return iceberg.DayTransform{}
	case "hour":
		return iceberg.HourTransform{}
	case "bucket":
		return iceberg.BucketTransform{NumBuckets: f.Param}
	case "truncate":
		return iceberg.TruncateTransform{Width: f.Param}
	}
	return iceberg.IdentityTransform{}
}

func sanitize(s string) string {
	out := []byte(s)
	for i, c := range out {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			out[i] = '_'
		}
	}
	return string(out)
}
