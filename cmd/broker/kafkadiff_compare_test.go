//go:build interop

package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// fieldDiff is one field whose value differs between the two answers.
type fieldDiff struct {
	path string // Topics[0].Partitions[1].ErrorCode
	a, b string // Sediment's value, Kafka's
}

var tagsType = reflect.TypeOf(kmsg.Tags{})

// diffResponses compares two answers of the same API and version field by
// field. Record batches (Fetch's RecordBatches) are compared batch by
// batch, header field by header field, so that a path names what differs.
func diffResponses(a, b kmsg.Response) []fieldDiff {
	var out []fieldDiff
	diffValues("", reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem(), &out)
	return out
}

func diffValues(path string, a, b reflect.Value, out *[]fieldDiff) {
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				*out = append(*out, fieldDiff{path, show(a), show(b)})
			}
			return
		}
		diffValues(path, a.Elem(), b.Elem(), out)
	case reflect.Struct:
		diffStruct(path, a, b, out)
	case reflect.Slice:
		if a.Type().Elem().Kind() == reflect.Uint8 {
			diffBytes(path, a.Bytes(), b.Bytes(), out)
			return
		}
		for i := range max(a.Len(), b.Len()) {
			p := path + "[" + strconv.Itoa(i) + "]"
			switch {
			case i >= a.Len():
				*out = append(*out, fieldDiff{p, "absent", show(b.Index(i))})
			case i >= b.Len():
				*out = append(*out, fieldDiff{p, show(a.Index(i)), "absent"})
			default:
				diffValues(p, a.Index(i), b.Index(i), out)
			}
		}
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			*out = append(*out, fieldDiff{path, show(a), show(b)})
		}
	}
}

// diffStruct compares exported fields, leaving out unknown tagged fields
// and the version (the same on both: it is the request's).
func diffStruct(path string, a, b reflect.Value, out *[]fieldDiff) {
	if a.Type() == tagsType {
		return
	}
	for i := range a.NumField() {
		f := a.Type().Field(i)
		if !f.IsExported() || (path == "" && f.Name == "Version") {
			continue
		}
		p := f.Name
		if path != "" {
			p = path + "." + f.Name
		}
		switch {
		case f.Name == "RecordBatches":
			diffBatches(p, a.Field(i).Bytes(), b.Field(i).Bytes(), out)
			continue
		case keyedLists[f.Name] != "" && keyedElems(f.Type, keyedLists[f.Name]):
			diffByKey(p, keyedLists[f.Name], a.Field(i), b.Field(i), out)
			continue
		}
		diffValues(p, a.Field(i), b.Field(i), out)
	}
}

// keyedLists are the lists that are sets, whose order means nothing, and
// the field that names an element: they are compared element by element
// matched by that key, and a path names the key (Configs[retention.ms],
// ApiKeys[68]). A group's members are one: Kafka keeps them in a hash map,
// so the order it lists them in follows their random member ids.
var keyedLists = map[string]string{
	"Members":           "MemberID",
	"Configs":           "Name",
	"ApiKeys":           "ApiKey",
	"SupportedFeatures": "Name",
	"FinalizedFeatures": "Name",
}

// keyedElems says whether t is a slice of structs with the field key.
func keyedElems(t reflect.Type, key string) bool {
	if t.Kind() != reflect.Slice || t.Elem().Kind() != reflect.Struct {
		return false
	}
	_, ok := t.Elem().FieldByName(key)
	return ok
}

// diffByKey compares two lists' elements matched by their key field.
func diffByKey(path, key string, a, b reflect.Value, out *[]fieldDiff) {
	byKey := func(v reflect.Value) map[string]reflect.Value {
		m := map[string]reflect.Value{}
		for i := range v.Len() {
			m[fmt.Sprint(v.Index(i).FieldByName(key).Interface())] = v.Index(i)
		}
		return m
	}
	am, bm := byKey(a), byKey(b)
	keys := slices.Collect(maps.Keys(am))
	for k := range bm {
		if _, ok := am[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := path + "[" + k + "]"
		av, aok := am[k]
		bv, bok := bm[k]
		switch {
		case !aok:
			*out = append(*out, fieldDiff{p, "absent", show(bv)})
		case !bok:
			*out = append(*out, fieldDiff{p, show(av), "absent"})
		default:
			diffValues(p, av, bv, out)
		}
	}
}

func diffBytes(path string, a, b []byte, out *[]fieldDiff) {
	if !bytes.Equal(a, b) || (a == nil) != (b == nil) {
		*out = append(*out, fieldDiff{path, showBytes(a), showBytes(b)})
	}
}

// diffBatches compares two runs of record batches batch by batch; a
// trailing partial batch (Fetch may end with one) is compared as bytes.
func diffBatches(path string, a, b []byte, out *[]fieldDiff) {
	ab, arest := splitBatches(a)
	bb, brest := splitBatches(b)
	diffValues(path, reflect.ValueOf(ab), reflect.ValueOf(bb), out)
	if len(arest) > 0 || len(brest) > 0 {
		diffBytes(path+".partial", arest, brest, out)
	}
	if (a == nil) != (b == nil) && len(a) == 0 && len(b) == 0 {
		*out = append(*out, fieldDiff{path, showBytes(a), showBytes(b)})
	}
}

// splitBatches decodes whole record batches and returns what is left.
func splitBatches(b []byte) ([]kmsg.RecordBatch, []byte) {
	var batches []kmsg.RecordBatch
	for len(b) >= 12 {
		n := 12 + int(int32(binary.BigEndian.Uint32(b[8:12])))
		if n < 12 || n > len(b) {
			break
		}
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(b[:n]); err != nil {
			break
		}
		batches = append(batches, rb)
		b = b[n:]
	}
	return batches, b
}

// show formats a value for a failure message: pointers followed, unknown
// tags left out.
func show(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return "nil"
		}
		return show(v.Elem())
	case reflect.String:
		return strconv.Quote(v.String())
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return showBytes(v.Bytes())
		}
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = show(v.Index(i))
		}
		return "[" + strings.Join(parts, " ") + "]"
	case reflect.Struct:
		var parts []string
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.IsExported() && f.Type != tagsType {
				parts = append(parts, f.Name+":"+show(v.Field(i)))
			}
		}
		return "{" + strings.Join(parts, " ") + "}"
	}
	return fmt.Sprint(v.Interface())
}

func showBytes(b []byte) string {
	switch {
	case b == nil:
		return "nil"
	case len(b) > 32:
		return fmt.Sprintf("%d bytes %x…", len(b), b[:32])
	}
	return fmt.Sprintf("%d bytes %x", len(b), b)
}

// renameStrings replaces, in place, every string (or *string) in v that is
// a key of names by its value.
func renameStrings(v reflect.Value, names map[string]string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			renameStrings(v.Elem(), names)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				renameStrings(v.Field(i), names)
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			renameStrings(v.Index(i), names)
		}
	case reflect.String:
		if n, ok := names[v.String()]; ok && v.CanSet() {
			v.SetString(n)
		}
	}
}
