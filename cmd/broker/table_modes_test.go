package main

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	itable "github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTableRawFormat: sediment.table.format=raw keeps any value (JSON or
// not, null included) as bytes in the value column, unpartitioned.
func TestTableRawFormat(t *testing.T) {
	tb := startTestBroker(t, "")
	createTableTopic(t, tb.addr, "blobs", 1, map[string]string{"sediment.table.format": "raw", "sediment.table.partition-by": ""})
	values := []string{"not json", `{"a":1}`, "\x00\x01\xff"}
	recs := produceValues(t, tb.addr, "blobs", 1, values)
	rows := waitTableRows(t, tb.b.tables.cat, "blobs", len(values))
	want := map[[2]int64]map[string]any{}
	for _, r := range recs {
		want[[2]int64{0, r.Offset}] = map[string]any{"_kafka_partition": 0, "_kafka_offset": r.Offset,
			"_kafka_timestamp": r.Timestamp.UTC().Format(time.RFC3339Nano),
			"_kafka_key":       base64.StdEncoding.EncodeToString(r.Key), "value": base64.StdEncoding.EncodeToString(r.Value)}
	}
	wantRowsEqual(t, rows, want)
}

// TestTableErrorsSkip: with sediment.table.errors=skip a bad record is
// counted and left out; no dead-letter topic appears.
func TestTableErrorsSkip(t *testing.T) {
	tb := startTestBroker(t, "")
	createTableTopic(t, tb.addr, "skipping", 1, map[string]string{"sediment.table.errors": "skip"})
	produceValues(t, tb.addr, "skipping", 1, []string{`{"a":1}`, `oops`, `{"a":3}`, `oops again`}) // the last commit holds no row
	rows := waitTableRows(t, tb.b.tables.cat, "skipping", 2)
	if len(rows) != 2 || rows[1]["a"] != 3.0 {
		t.Fatalf("rows %v", rows)
	}
	waitStatus(t, tb, "skipping", func(st map[string]string) bool { return st["sediment.table.status.lag"] == "0" })
	if st, _ := tb.b.tables.conv.Status("skipping"); st.Skipped != 2 || st.DLQ != 0 || st.Committed != 4 {
		t.Fatalf("status %+v, want two skipped records, no dead letter, offsets committed up to 4", st)
	}
	if _, ok := tb.b.log.Topic("skipping.dlq"); ok {
		t.Fatal("errors=skip created a dead-letter topic")
	}
}

// TestTableErrorsStop: with sediment.table.errors=stop a bad record stops
// the table's converter: the rows before it are committed, the status
// says stopped and why, and the topic itself keeps taking records.
func TestTableErrorsStop(t *testing.T) {
	tb := startTestBroker(t, "")
	createTableTopic(t, tb.addr, "strict", 1, map[string]string{"sediment.table.errors": "stop"})
	produceValues(t, tb.addr, "strict", 1, []string{`{"a":1}`, `{"a":2}`, `oops`, `{"a":4}`})
	st := waitStatus(t, tb, "strict", func(st map[string]string) bool {
		return strings.HasPrefix(st["sediment.table.status.state"], "stopped")
	})
	if !strings.Contains(st["sediment.table.status.state"], "offset 2") || !strings.Contains(st["sediment.table.status.state"], "not JSON") {
		t.Fatalf("state %q does not name the record and the reason", st["sediment.table.status.state"])
	}
	rows := scanTable(t, tb.b.tables.cat, "strict")
	if len(rows) != 2 {
		t.Fatalf("%d rows before the bad record, want 2 (%v)", len(rows), rows)
	}
	produceValues(t, tb.addr, "strict", 1, []string{`{"a":5}`}) // never blocks the topic
}

// waitStatus polls the table's DescribeConfigs status entries until ok.
func waitStatus(t *testing.T, tb *testBroker, topic string, ok func(map[string]string) bool) map[string]string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(tb.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got map[string]string
	for range 240 {
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
			got[c.Key] = c.MaybeValue()
		}
		if ok(got) {
			return got
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("status of %s never as wanted: %v", topic, got)
	return nil
}

// TestTableCommitConflict: another writer commits a snapshot to the table
// between two of the converter's commits; the converter's next commit
// conflicts, is retried on fresh metadata, and every record is in the
// table once.
func TestTableCommitConflict(t *testing.T) {
	tb := startTestBroker(t, "")
	cat := tb.b.tables.cat
	createTableTopic(t, tb.addr, "contended", 1, nil)
	produceValues(t, tb.addr, "contended", 1, numbered(0, 10))
	waitTableRows(t, cat, "contended", 10)

	ctx := testCtx(t, time.Minute)
	tbl, err := cat.LoadTable(ctx, itable.Identifier{"sediment", "contended"})
	if err != nil {
		t.Fatal(err)
	}
	props := iceberg.Properties{}
	for k, v := range tbl.CurrentSnapshot().Summary.Properties {
		if strings.HasPrefix(k, "sediment.next-offset.") {
			props[k] = v
		}
	}
	tx := tbl.NewTransaction()
	if err := tx.AddFiles(ctx, nil, props, false); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatalf("the other writer's commit: %v", err)
	}
	produceValues(t, tb.addr, "contended", 1, numbered(10, 20))
	rows := waitTableRows(t, cat, "contended", 20)
	for i, row := range rows {
		if _, off := row.partOff(); off != int64(i) || row["n"] != float64(i) {
			t.Fatalf("row %d: %v", i, row)
		}
	}
	if len(rows) != 20 {
		t.Fatalf("%d rows, want 20", len(rows))
	}
	if st, _ := tb.b.tables.conv.Status("contended"); st.Retries == 0 {
		t.Fatalf("no commit was retried: %+v", st)
	}
}

// TestTableTopicRecreated: a table topic deleted and created again under
// the same name is converted from its first offset into the same table
// (the old rows stay).
func TestTableTopicRecreated(t *testing.T) {
	tb := startTestBroker(t, "")
	createTableTopic(t, tb.addr, "again", 1, nil)
	produceValues(t, tb.addr, "again", 1, numbered(0, 3))
	waitTableRows(t, tb.b.tables.cat, "again", 3)
	cl, err := kgo.NewClient(kgo.SeedBrokers(tb.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).DeleteTopics(testCtx(t, 30*time.Second), "again"); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if _, ok := tb.b.log.Topic("again"); !ok {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	createTableTopic(t, tb.addr, "again", 1, nil)
	produceValues(t, tb.addr, "again", 1, numbered(3, 5))
	rows := waitTableRows(t, tb.b.tables.cat, "again", 5)
	var got []string
	for _, r := range rows {
		_, off := r.partOff()
		got = append(got, fmt.Sprintf("%d:%v", off, r["n"]))
	}
	sort.Strings(got)
	if strings.Join(got, " ") != "0:0 0:3 1:1 1:4 2:2" {
		t.Fatalf("rows (offset:n) %v", got)
	}
}

// TestTableBadPartitionColumn: partitioning by a value column the table
// does not have (no sediment.table.schema) stops the converter with a
// status saying why; the topic keeps working.
func TestTableBadPartitionColumn(t *testing.T) {
	tb := startTestBroker(t, "")
	createTableTopic(t, tb.addr, "nocol", 1, map[string]string{"sediment.table.partition-by": "bucket(4, id)"})
	produceValues(t, tb.addr, "nocol", 1, []string{`{"id":1}`})
	st := waitStatus(t, tb, "nocol", func(st map[string]string) bool {
		return strings.HasPrefix(st["sediment.table.status.state"], "stopped")
	})
	if !strings.Contains(st["sediment.table.status.state"], "needs sediment.table.schema") {
		t.Fatalf("state %q does not say why", st["sediment.table.status.state"])
	}
}
