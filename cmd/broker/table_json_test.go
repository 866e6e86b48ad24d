package main

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	icebergcatalog "github.com/apache/iceberg-go/catalog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/storage/objectstore/miniotest"
)

// jsonCase is a stream of JSON records, good and bad, and the rows the
// good ones must become.
type jsonCase struct {
	values []string
	bad    map[int]string // index -> what the dead-letter reason must say
	want   func(i int) map[string]any
}

// inferredCase: nested objects, arrays, nulls and RFC 3339 strings, with a
// new field from record 12 on (schema evolution) and three bad records.
func inferredCase() jsonCase {
	c := jsonCase{bad: map[int]string{7: "not JSON", 13: "field id has type long", 17: "want a JSON object"}}
	for i := range 24 {
		switch i {
		case 7:
			c.values = append(c.values, "not json at all")
			continue
		case 13:
			c.values = append(c.values, `{"id":"thirteen"}`)
			continue
		case 17:
			c.values = append(c.values, `[1,2,3]`)
			continue
		}
		v := fmt.Sprintf(`{"id":%d,"name":"n%d","tags":["a%d","b"],"nested":{"x":%d,"deep":{"flag":%t}},"score":%d.5,"at":"2026-11-29T21:00:%02dZ"`,
			i, i, i, i, i%2 == 0, i, i)
		if i%5 == 0 {
			v = fmt.Sprintf(`{"id":%d,"name":null,"tags":[],"nested":null,"score":%d.5,"at":"2026-11-29T21:00:%02dZ"`, i, i, i)
		}
		if i >= 12 {
			v += fmt.Sprintf(`,"extra":"e%d"`, i)
			v = strings.Replace(v, `"deep":{`, fmt.Sprintf(`"deep":{"later":%d,`, i), 1) // a new nested field
		}
		c.values = append(c.values, v+"}")
	}
	c.want = func(i int) map[string]any {
		w := map[string]any{"id": i, "score": float64(i) + 0.5, "at": fmt.Sprintf("2026-11-29T21:00:%02dZ", i)}
		if i%5 != 0 {
			w["name"] = fmt.Sprintf("n%d", i)
			w["tags"] = []any{fmt.Sprintf("a%d", i), "b"}
			deep := map[string]any{"flag": i%2 == 0, "later": nil} // older rows read the nested column as null
			if i >= 12 {
				deep["later"] = i
			}
			w["nested"] = map[string]any{"x": i, "deep": deep}
		} else if i > 0 {
			w["tags"] = []any{} // record 0's [] came before the column existed: null
		}
		if i >= 12 {
			w["extra"] = fmt.Sprintf("e%d", i)
		}
		return w
	}
	return c
}

// runJSONCase produces the case to a 2-partition table topic and checks
// the table row for row, the dead-letter topic and the status entries.
func runJSONCase(t *testing.T, addr string, cat icebergcatalog.Catalog, topic string, c jsonCase, configs map[string]string) {
	t.Helper()
	createTableTopic(t, addr, topic, 2, configs)
	hdr := kgo.RecordHeader{Key: "h", Value: []byte("v")}
	recs := produceValues(t, addr, topic, 2, c.values, hdr)
	want := map[[2]int64]map[string]any{}
	for i, r := range recs {
		if _, bad := c.bad[i]; bad {
			continue
		}
		w := c.want(i)
		w["_kafka_partition"], w["_kafka_offset"] = r.Partition, r.Offset
		w["_kafka_timestamp"] = r.Timestamp.UTC().Format(time.RFC3339Nano)
		w["_kafka_key"] = base64.StdEncoding.EncodeToString(r.Key)
		w["_kafka_headers"] = []any{map[string]any{"key": "h", "value": base64.StdEncoding.EncodeToString([]byte("v"))}}
		want[[2]int64{int64(r.Partition), r.Offset}] = w
	}
	rows := waitTableRows(t, cat, topic, len(want))
	wantRowsEqual(t, rows, want)
	checkDeadLetters(t, addr, topic, recs, c.bad)
	checkTableStatus(t, addr, topic, len(want), len(c.bad))
}

// checkDeadLetters reads <topic>.dlq and matches each record to its
// source by the headers.
func checkDeadLetters(t *testing.T, addr, topic string, recs []*kgo.Record, bad map[int]string) {
	t.Helper()
	if len(bad) == 0 {
		return
	}
	var got []*kgo.Record
	for range 120 {
		got = nil
		for _, rs := range readTopic(t, addr, topic+".dlq") {
			got = append(got, rs...)
		}
		if len(got) >= len(bad) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if len(got) != len(bad) {
		t.Fatalf("%s.dlq holds %d records, want %d", topic, len(got), len(bad))
	}
	for _, d := range got {
		h := map[string]string{}
		for _, x := range d.Headers {
			h[x.Key] = string(x.Value)
		}
		found := false
		for i, says := range bad {
			src := recs[i]
			if h["sediment.table.source.partition"] == fmt.Sprint(src.Partition) && h["sediment.table.source.offset"] == fmt.Sprint(src.Offset) {
				found = true
				if !strings.Contains(h["sediment.table.error"], says) || string(d.Value) != string(src.Value) ||
					h["sediment.table.source.topic"] != topic || h["h"] != "v" {
					t.Fatalf("dead letter of record %d: headers %v value %q; want the reason to say %q", i, h, d.Value, says)
				}
			}
		}
		if !found {
			t.Fatalf("dead letter with unknown source: %v", h)
		}
	}
}

// checkTableStatus reads the sediment.table.status.* entries.
func checkTableStatus(t *testing.T, addr, topic string, rows, dlq int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got map[string]string
	for range 40 { // rows are visible to a scan a moment before the worker counts them
		rc, err := kadm.NewClient(cl).DescribeTopicConfigs(testCtx(t, 30*time.Second), topic)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := rc.On(topic, nil)
		if err != nil {
			t.Fatal(err)
		}
		got = map[string]string{}
		for _, c := range cfg.Configs {
			if strings.HasPrefix(c.Key, "sediment.table.status.") {
				got[c.Key] = c.MaybeValue()
			}
		}
		if got["sediment.table.status.rows"] == fmt.Sprint(rows) && got["sediment.table.status.dlq"] == fmt.Sprint(dlq) &&
			got["sediment.table.status.lag"] == "0" {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if got["sediment.table.status.rows"] != fmt.Sprint(rows) || got["sediment.table.status.dlq"] != fmt.Sprint(dlq) ||
		got["sediment.table.status.lag"] != "0" || got["sediment.table.status.state"] != "running" ||
		got["sediment.table.status.last-commit"] == "" || got["sediment.table.status.files"] == "0" {
		t.Fatalf("status entries %v, want rows=%d dlq=%d lag=0 state=running", got, rows, dlq)
	}
}

// TestTableJSONInferred: franz-go produces JSON records (nested objects,
// arrays, nulls, timestamps as strings) to a table topic without a schema;
// the table read back with an iceberg-go scan equals the records row for
// row with the metadata columns right; a field appearing mid-stream is a
// new column that older rows read as null; bad records are in the DLQ with
// their reason and the rest is in the table.
func TestTableJSONInferred(t *testing.T) {
	tb := startTestBroker(t, "")
	runJSONCase(t, tb.addr, tb.b.tables.cat, "events", inferredCase(), nil)
}

// TestTableJSONInferredMinIO is TestTableJSONInferred with the object store
// and the warehouse on a real MinIO.
func TestTableJSONInferredMinIO(t *testing.T) {
	srv := miniotest.Shared(t)
	store, bucket := minioStore(t, srv, "s3", "broker")
	for k, v := range envMap(srv.Env()) {
		t.Setenv(k, v)
	}
	tb := startTestBroker(t, "", store...)
	runJSONCase(t, tb.addr, tb.b.tables.cat, "events", inferredCase(), nil)
	for _, f := range tableDataFiles(t, tb.b.tables.cat, "events") {
		if !strings.HasPrefix(f, "s3://"+bucket+"/broker/tables/") {
			t.Fatalf("data file %s is not in the MinIO warehouse", f)
		}
	}
	if n := countObjects(t, srv, bucket, "broker/tables/", ""); n == 0 {
		t.Fatal("no object under the MinIO warehouse")
	}
}

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// TestTableJSONExplicitSchema: with sediment.table.schema the columns are
// typed as declared (RFC 3339 strings into a timestamptz column, an int
// in a struct), unknown fields are ignored, a missing required field goes
// to the DLQ, and the table is partitioned by bucket(4, id), day(at).
func TestTableJSONExplicitSchema(t *testing.T) {
	tb := startTestBroker(t, "")
	schema := `{"type":"struct","fields":[
		{"id":1,"name":"id","type":"long","required":true},
		{"id":2,"name":"at","type":"timestamptz","required":false},
		{"id":3,"name":"tags","type":{"type":"list","element-id":4,"element":"string","element-required":false},"required":false},
		{"id":5,"name":"nested","type":{"type":"struct","fields":[{"id":6,"name":"x","type":"int","required":false}]},"required":false}]}`
	c := jsonCase{bad: map[int]string{3: "field id is required", 6: "not an RFC 3339 timestamp"}}
	for i := range 10 {
		switch i {
		case 3:
			c.values = append(c.values, `{"at":"2026-11-29T21:00:00Z"}`)
		case 6:
			c.values = append(c.values, `{"id":6,"at":"yesterday"}`)
		default:
			c.values = append(c.values, fmt.Sprintf(`{"id":%d,"at":"2026-11-%02dT21:00:00.123+01:00","tags":["t%d",null],"nested":{"x":%d,"ignored":1},"unknown":true}`, i, 20+i, i, i))
		}
	}
	c.want = func(i int) map[string]any {
		at := time.Date(2026, 11, 20+i, 20, 0, 0, 123e6, time.UTC)
		return map[string]any{"id": i, "at": at.Format(time.RFC3339Nano), "tags": []any{fmt.Sprintf("t%d", i), nil},
			"nested": map[string]any{"x": i}}
	}
	runJSONCase(t, tb.addr, tb.b.tables.cat, "typed", c, map[string]string{
		"sediment.table.schema": schema, "sediment.table.partition-by": "bucket(4, id), day(at)"})
	files := tableDataFiles(t, tb.b.tables.cat, "typed")
	if len(files) < 2 {
		t.Fatalf("a table partitioned by bucket(4, id) over 8 ids wrote %d data files", len(files))
	}
}
