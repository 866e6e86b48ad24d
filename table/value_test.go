package table

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
)

func mustSchema(t testing.TB, cfg Config) *iceberg.Schema {
	t.Helper()
	s, err := initialSchema(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const typedSchema = `{"type":"struct","fields":[
	{"id":1,"name":"id","type":"long","required":true},
	{"id":2,"name":"at","type":"timestamptz","required":false},
	{"id":3,"name":"day","type":"date","required":false},
	{"id":4,"name":"small","type":"int","required":false},
	{"id":5,"name":"ratio","type":"float","required":false},
	{"id":6,"name":"blob","type":"binary","required":false},
	{"id":7,"name":"ok","type":"boolean","required":false},
	{"id":8,"name":"tags","type":{"type":"list","element-id":9,"element":"string","element-required":true},"required":false},
	{"id":10,"name":"in","type":{"type":"struct","fields":[{"id":11,"name":"x","type":"double","required":false}]},"required":false}]}`

func dataStruct(s *iceberg.Schema) *iceberg.StructType {
	return &iceberg.StructType{FieldList: s.AsStruct().FieldList[metaColumns:]}
}

func TestConvertExplicitSchema(t *testing.T) {
	st := dataStruct(mustSchema(t, Config{Format: "json", Schema: typedSchema}))
	obj, err := parseJSONObject([]byte(`{"id":7,"at":"1970-01-01T00:00:01.5Z","day":"1970-01-03","small":-3,"ratio":0.25,
		"blob":"AQI=","ok":true,"tags":["a"],"in":{"x":1},"extra":"ignored"}`))
	if err != nil {
		t.Fatal(err)
	}
	c := converter{}
	got, err := c.structValue(nil, st, obj)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{int64(7), int64(1_500_000), int32(2), int32(-3), float32(0.25), []byte{1, 2}, true, []any{"a"}, []any{1.0}}
	if !reflect.DeepEqual(got, want) || len(c.additions) != 0 {
		t.Fatalf("got %#v (additions %v), want %#v", got, c.additions, want)
	}
}

func TestConvertRejects(t *testing.T) {
	st := dataStruct(mustSchema(t, Config{Format: "json", Schema: typedSchema}))
	cases := map[string]string{
		`{"at":"2020-01-01T00:00:00Z"}`: "field id is required",
		`{"id":"1"}`:                    "field id has type long, got string",
		`{"id":1.5}`:                    "field id has type long, got number",
		`{"id":1,"small":3000000000}`:   "field small has type int",
		`{"id":1,"at":"noon"}`:          "not an RFC 3339 timestamp",
		`{"id":1,"day":"2020-13-01"}`:   "field day has type date",
		`{"id":1,"blob":"%%%"}`:         "field blob has type binary",
		`{"id":1,"tags":["a",null]}`:    "tags[1] is null",
		`{"id":1,"tags":"a"}`:           "field tags has type list",
		`{"id":1,"in":{"x":"y"}}`:       "field in.x has type double",
		`{"id":1,"ok":"yes"}`:           "field ok has type boolean",
	}
	for in, says := range cases {
		obj, err := parseJSONObject([]byte(in))
		if err == nil {
			_, err = (&converter{}).structValue(nil, st, obj)
		}
		if !errors.Is(err, ErrUnconvertible) || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: error %v, want one saying %q", in, err, says)
		}
	}
	for _, in := range []string{"", "null", "[1]", `"s"`, `{"a":1} {"b":2}`, `{"a":`} {
		var data []byte
		if in != "" {
			data = []byte(in)
		}
		if _, err := parseJSONObject(data); !errors.Is(err, ErrUnconvertible) {
			t.Errorf("value %q: error %v, want ErrUnconvertible", in, err)
		}
	}
}

func TestInferAdditions(t *testing.T) {
	st := dataStruct(mustSchema(t, Config{Format: "json"}))
	obj, _ := parseJSONObject([]byte(`{"b":true,"i":3,"f":1.5,"s":"2020-01-01T00:00:00Z","o":{"x":[1,2],"n":null},
		"l":[null,{"y":"z"}],"empty":[],"nothing":null,"eo":{}}`))
	c := converter{infer: true}
	if _, err := c.structValue(nil, st, obj); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range c.additions {
		got[strings.Join(a.path, ".")] = a.typ.String()
	}
	want := map[string]string{"b": "boolean", "i": "long", "f": "double", "s": "string",
		"o": "struct<0: x: optional list<long>>", "l": "list<struct<0: y: optional string>>"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("additions %v, want %v", got, want)
	}
	for _, bad := range []string{`{"_kafka_offset":1}`, `{"a.b":1}`, `{"":1}`} {
		obj, _ := parseJSONObject([]byte(bad))
		c := converter{infer: true}
		if _, err := c.structValue(nil, st, obj); !errors.Is(err, ErrUnconvertible) {
			t.Errorf("%s: error %v, want ErrUnconvertible", bad, err)
		}
	}
}

func TestPartitionSpec(t *testing.T) {
	s := mustSchema(t, Config{Format: "json", Schema: typedSchema})
	spec, err := partitionSpec("id, hour(at), bucket(8, id), truncate(3, tags.element), month(day), year(_kafka_timestamp)", s)
	if err == nil || !strings.Contains(err.Error(), "inside a list") {
		t.Fatalf("a list element is not a partition source: %v %v", spec, err)
	}
	spec, err = partitionSpec("id, hour(at), bucket(8, id), month(day), year(_kafka_timestamp), day(_kafka_timestamp)", s)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range spec.Fields() {
		names = append(names, f.Name+"="+f.Transform.String())
	}
	want := "id=identity at_hour=hour id_bucket_8=bucket[8] day_month=month _kafka_timestamp_year=year _kafka_timestamp_day=day"
	if strings.Join(names, " ") != want {
		t.Fatalf("spec %v, want %s", names, want)
	}
	for in, says := range map[string]string{
		"nope":            "not in the table's schema",
		"day(id)":         "cannot apply",
		"truncate(2, ok)": "cannot apply",
	} {
		if _, err := partitionSpec(in, s); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: error %v, want one saying %q", in, err, says)
		}
	}
	if spec, err := partitionSpec("", s); err != nil || !spec.IsUnpartitioned() {
		t.Fatalf("empty partition-by: %v %v", spec, err)
	}
}

func TestInitialSchemaRejectsUnsupported(t *testing.T) {
	_, err := initialSchema(Config{Format: "json", Schema: `{"type":"struct","fields":[{"id":1,"name":"d","type":"decimal(9,2)","required":false}]}`})
	if err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Fatalf("error %v, want not supported", err)
	}
}

// FuzzConvertJSON: any record value either converts or is rejected as
// unconvertible; nothing panics, whatever the schema mode.
func FuzzConvertJSON(f *testing.F) {
	for _, s := range []string{`{"id":1,"at":"2020-01-01T00:00:00Z","tags":["a"],"in":{"x":1.5}}`, `{"a":{"b":[{"c":null}]}}`,
		`{"id":"x"}`, `[]`, `{"a":1e400}`, `{"":{}}`} {
		f.Add([]byte(s))
	}
	typed := dataStruct(mustSchema(f, Config{Format: "json", Schema: typedSchema}))
	inferred := dataStruct(mustSchema(f, Config{Format: "json"}))
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, err := parseJSONObject(data)
		if err != nil {
			if !errors.Is(err, ErrUnconvertible) {
				t.Fatalf("error %v is not ErrUnconvertible", err)
			}
			return
		}
		for _, c := range []struct {
			st    *iceberg.StructType
			infer bool
		}{{typed, false}, {inferred, true}} {
			conv := converter{infer: c.infer}
			if _, err := conv.structValue(nil, c.st, obj); err != nil && !errors.Is(err, ErrUnconvertible) {
				t.Fatalf("error %v is not ErrUnconvertible", err)
			}
		}
	})
}
