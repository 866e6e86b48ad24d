package table

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
)

// ErrUnconvertible marks a record that cannot become a row of its table:
// malformed JSON, a value whose type conflicts with its column, a missing
// required field. Such records go to the dead-letter topic.
var ErrUnconvertible = errors.New("table: record cannot be converted")

func unconvertible(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnconvertible, fmt.Sprintf(format, args...))
}

// addition is a column the records carry and the table does not have yet.
type addition struct {
	path []string
	typ  iceberg.Type
}

// converter turns a decoded JSON value into a row value of an Iceberg type.
// With infer set, unknown object keys become additions; otherwise they are
// ignored (an explicit schema says what is kept).
type converter struct {
	infer     bool
	additions []addition
}

// parseJSONObject decodes a record value that must be one JSON object.
func parseJSONObject(data []byte) (map[string]any, error) {
	if data == nil {
		return nil, unconvertible("the value is null, want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, unconvertible("the value is not JSON: %v", err)
	}
	if dec.More() {
		return nil, unconvertible("the value holds more than one JSON value")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, unconvertible("the value is %s, want a JSON object", jsonKind(v))
	}
	return obj, nil
}

// structValue converts obj to the values of st's fields in order.
func (c *converter) structValue(path []string, st *iceberg.StructType, obj map[string]any) ([]any, error) {
	out := make([]any, len(st.FieldList))
	for i, f := range st.FieldList {
		v, ok := obj[f.Name]
		if !ok || v == nil {
			if f.Required {
				return nil, unconvertible("field %s is required and missing or null", dotted(path, f.Name))
			}
			continue
		}
		cv, err := c.value(append(path, f.Name), f.Type, v)
		if err != nil {
			return nil, err
		}
		out[i] = cv
	}
	if c.infer {
		return out, c.collectAdditions(path, st, obj)
	}
	return out, nil
}

// collectAdditions notes obj's keys that st lacks, with inferred types.
func (c *converter) collectAdditions(path []string, st *iceberg.StructType, obj map[string]any) error {
	for _, k := range sortedKeys(obj) {
		if fieldIndex(st, k) >= 0 || obj[k] == nil {
			continue
		}
		if err := checkFieldName(path, k); err != nil {
			return err
		}
		t, err := inferType(append(path, k), obj[k])
		if err != nil {
			return err
		}
		if t != nil && !c.pending(append(path, k)) {
			c.additions = append(c.additions, addition{path: append(append([]string(nil), path...), k), typ: t})
		}
	}
	return nil
}

func (c *converter) pending(path []string) bool {
	for _, a := range c.additions {
		if strings.Join(a.path, "\x00") == strings.Join(path, "\x00") {
			return true
		}
	}
	return false
}

func checkFieldName(path []string, k string) error {
	switch {
	case k == "":
		return unconvertible("an empty field name in %s", dotted(path, "(object)"))
	case strings.Contains(k, "."):
		return unconvertible("field name %q contains a dot, which Iceberg column paths cannot hold", dotted(path, k))
	case len(path) == 0 && strings.HasPrefix(k, "_kafka_"):
		return unconvertible("field %q: names starting with _kafka_ are reserved for the metadata columns", k)
	}
	return nil
}

// value converts one JSON value (not nil) to a value of type t.
func (c *converter) value(path []string, t iceberg.Type, v any) (any, error) {
	switch t := t.(type) {
	case *iceberg.StructType:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, mismatch(path, t, v)
		}
		return c.structValue(path, t, obj)
	case *iceberg.ListType:
		return c.listValue(path, t, v)
	}
	return primitiveValue(path, t, v)
}

func (c *converter) listValue(path []string, t *iceberg.ListType, v any) ([]any, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, mismatch(path, t, v)
	}
	out := make([]any, len(arr))
	for i, e := range arr {
		if e == nil {
			if t.ElementRequired {
				return nil, unconvertible("%s[%d] is null but the list's elements are required", dotted(path), i)
			}
			continue
		}
		cv, err := c.value(append(path, "element"), t.Element, e)
		if err != nil {
			return nil, err
		}
		out[i] = cv
	}
	return out, nil
}

// primitiveValue converts v to the Go value the Arrow builders take for t:
// bool, int32, int64, float32, float64, string, []byte, or int64
// microseconds (timestamps) and int32 days (dates).
func primitiveValue(path []string, t iceberg.Type, v any) (any, error) {
	switch t.(type) {
	case iceberg.BooleanType:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case iceberg.Int32Type:
		if n, ok := v.(json.Number); ok {
			if i, err := strconv.ParseInt(string(n), 10, 32); err == nil {
				return int32(i), nil
			}
		}
	case iceberg.Int64Type:
		if n, ok := v.(json.Number); ok {
			if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
				return i, nil
			}
		}
	case iceberg.Float32Type, iceberg.Float64Type:
		if n, ok := v.(json.Number); ok {
			if f, err := strconv.ParseFloat(string(n), 64); err == nil {
				if _, is32 := t.(iceberg.Float32Type); is32 {
					return float32(f), nil
				}
				return f, nil
			}
		}
	case iceberg.StringType:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case iceberg.BinaryType:
		if s, ok := v.(string); ok {
			if b, err := base64.StdEncoding.DecodeString(s); err == nil {
				return b, nil
			}
		}
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return timestampValue(path, t, v)
	case iceberg.DateType:
		if s, ok := v.(string); ok {
			if d, err := time.Parse(time.DateOnly, s); err == nil {
				return int32(d.Unix() / 86400), nil
			}
		}
	default:
		return nil, unconvertible("field %s has type %s, which table topics do not support", dotted(path), t)
	}
	return nil, mismatch(path, t, v)
}

// timestampValue accepts an RFC 3339 string or an integer of milliseconds
// since the epoch, and returns microseconds since the epoch.
func timestampValue(path []string, t iceberg.Type, v any) (any, error) {
	switch v := v.(type) {
	case string:
		ts, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return nil, unconvertible("field %s: %q is not an RFC 3339 timestamp", dotted(path), v)
		}
		return ts.UnixMicro(), nil
	case json.Number:
		if ms, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return ms * 1000, nil
		}
	}
	return nil, mismatch(path, t, v)
}

func mismatch(path []string, t iceberg.Type, v any) error {
	return unconvertible("field %s has type %s, got %s %s", dotted(path), t, jsonKind(v), abbreviate(v))
}

func jsonKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		if isIntegral(v) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func abbreviate(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

func isIntegral(n json.Number) bool {
	_, err := strconv.ParseInt(string(n), 10, 64)
	return err == nil
}

func dotted(path []string, more ...string) string {
	return strings.Join(append(append([]string(nil), path...), more...), ".")
}

func fieldIndex(st *iceberg.StructType, name string) int {
	for i, f := range st.FieldList {
		if f.Name == name {
			return i
		}
	}
	return -1
}
