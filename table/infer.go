package table

import (
	"encoding/json"
	"sort"

	"github.com/apache/iceberg-go"
)

// Type inference for tables without sediment.table.schema. The rules are
// deliberately plain, so a reader can predict the column a field becomes:
//
//	true/false                    boolean
//	integer literal (fits int64)  long
//	any other number              double
//	string                        string (never guessed to be a timestamp)
//	object                        struct of its non-null fields
//	array                         list of its first non-null element's type
//	null, [] or {}                no column until a value with a type shows up
//
// Every inferred column is optional. Field ids are placeholders: the
// schema update that adds a column assigns the real ones.

// inferType returns the column type for v, or nil when v says nothing
// about its type yet.
func inferType(path []string, v any) (iceberg.Type, error) {
	switch v := v.(type) {
	case bool:
		return iceberg.PrimitiveTypes.Bool, nil
	case json.Number:
		if isIntegral(v) {
			return iceberg.PrimitiveTypes.Int64, nil
		}
		return iceberg.PrimitiveTypes.Float64, nil
	case string:
		return iceberg.PrimitiveTypes.String, nil
	case map[string]any:
		return inferStruct(path, v)
	case []any:
		return inferList(path, v)
	}
	return nil, nil
}

func inferStruct(path []string, obj map[string]any) (iceberg.Type, error) {
	st := &iceberg.StructType{}
	for _, k := range sortedKeys(obj) {
		if err := checkFieldName(path, k); err != nil {
			return nil, err
		}
		t, err := inferType(append(path, k), obj[k])
		if err != nil {
			return nil, err
		}
		if t != nil {
			st.FieldList = append(st.FieldList, iceberg.NestedField{ID: 0, Name: k, Type: t})
		}
	}
	if len(st.FieldList) == 0 {
		return nil, nil
	}
	return st, nil
}

func inferList(path []string, arr []any) (iceberg.Type, error) {
	for _, e := range arr {
		t, err := inferType(append(path, "element"), e)
		if err != nil || t != nil {
			if t == nil {
				return nil, err
			}
			return &iceberg.ListType{Element: t}, err
		}
	}
	return nil, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
