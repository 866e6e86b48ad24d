package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	icebergcatalog "github.com/apache/iceberg-go/catalog"
	itable "github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/table/catalog"
)

// tableRow is one row of a table read back with an iceberg-go scan, as JSON
// values (structs are objects, lists arrays, binary base64).
type tableRow map[string]any

func (r tableRow) partOff() (int32, int64) {
	return int32(r["_kafka_partition"].(float64)), int64(r["_kafka_offset"].(float64))
}

// scanTable reads the whole current snapshot of sediment.<topic>, sorted
// by partition and offset.
func scanTable(t *testing.T, cat icebergcatalog.Catalog, topic string) []tableRow {
	t.Helper()
	ctx := testCtx(t, time.Minute)
	tbl, err := cat.LoadTable(ctx, itable.Identifier{"sediment", topic})
	if err != nil {
		t.Fatalf("load table %s: %v", topic, err)
	}
	return scanLoaded(t, ctx, tbl)
}

func scanLoaded(t *testing.T, ctx context.Context, tbl *itable.Table) []tableRow {
	t.Helper()
	if tbl.CurrentSnapshot() == nil {
		return nil
	}
	at, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatalf("scan %v: %v", tbl.Identifier(), err)
	}
	defer at.Release()
	var rows []tableRow
	tr := array.NewTableReader(at, 0)
	defer tr.Release()
	for tr.Next() {
		rows = append(rows, recordRows(t, tr.RecordBatch())...)
	}
	sort.Slice(rows, func(i, j int) bool {
		pi, oi := rows[i].partOff()
		pj, oj := rows[j].partOff()
		return pi < pj || pi == pj && oi < oj
	})
	return rows
}

func recordRows(t *testing.T, rec arrow.RecordBatch) []tableRow {
	rows := make([]tableRow, rec.NumRows())
	for i := range rows {
		m := map[string]any{}
		for c, f := range rec.Schema().Fields() {
			m[f.Name] = rec.Column(c).GetOneForMarshal(i)
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		var row tableRow
		if err := json.Unmarshal(b, &row); err != nil {
			t.Fatal(err)
		}
		rows[i] = row
	}
	return rows
}

// waitTableRows scans until the table holds want rows (bounded).
func waitTableRows(t *testing.T, cat icebergcatalog.Catalog, topic string, want int) []tableRow {
	t.Helper()
	var rows []tableRow
	for range 240 {
		ctx := testCtx(t, time.Minute)
		tbl, err := cat.LoadTable(ctx, itable.Identifier{"sediment", topic})
		if err == nil {
			if rows = scanLoaded(t, ctx, tbl); len(rows) >= want {
				return rows
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("table %s holds %d rows after 60s, want %d", topic, len(rows), want)
	return nil
}

// openCatalog opens the broker's embedded catalog from outside it.
func openCatalog(t *testing.T, dataDir, objectStore string) icebergcatalog.Catalog {
	t.Helper()
	cat, err := catalog.Open(testCtx(t, time.Minute), "", catalog.Options{DataDir: dataDir, ObjectStoreURL: objectStore})
	if err != nil {
		t.Fatalf("open catalog: %v", err)
	}
	if c, ok := cat.(icebergcatalog.Closer); ok {
		t.Cleanup(func() { c.Close() })
	}
	return cat
}

// createTableTopic creates a table topic with extra configs.
func createTableTopic(t *testing.T, addr, topic string, partitions int32, configs map[string]string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	cfg := map[string]*string{"sediment.table.enable": ptr("true"), "sediment.table.commit.interval.ms": ptr("1000")}
	for k, v := range configs {
		cfg[k] = ptr(v)
	}
	res, err := kadm.NewClient(cl).CreateTopic(testCtx(t, 30*time.Second), partitions, 1, cfg, topic)
	if err != nil || res.Err != nil {
		t.Fatalf("create table topic %s: %v %v %s", topic, err, res.Err, res.ErrMessage)
	}
}

// produceValues produces each value (with key k<i>) to partition
// i%partitions and waits for every acknowledgement.
func produceValues(t *testing.T, addr, topic string, partitions int, values []string, headers ...kgo.RecordHeader) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, len(values))
	for i, v := range values {
		recs[i] = &kgo.Record{Topic: topic, Partition: int32(i % partitions), Key: []byte(fmt.Sprintf("k%d", i)),
			Value: []byte(v), Headers: headers}
	}
	if err := cl.ProduceSync(testCtx(t, time.Minute), recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	return recs
}

// wantRowsEqual compares rows with the expected rows by (partition, offset).
func wantRowsEqual(t *testing.T, got []tableRow, want map[[2]int64]map[string]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("table holds %d rows, want %d", len(got), len(want))
	}
	for _, row := range got {
		p, o := row.partOff()
		w, ok := want[[2]int64{int64(p), o}]
		if !ok {
			t.Fatalf("unexpected row at partition %d offset %d: %v", p, o, row)
		}
		for k, wv := range w {
			if !jsonEqual(row[k], wv) {
				t.Fatalf("partition %d offset %d column %s: got %s, want %s", p, o, k, jsonString(row[k]), jsonString(wv))
			}
		}
		for k, v := range row {
			if _, ok := w[k]; !ok && v != nil {
				t.Fatalf("partition %d offset %d: unexpected non-null column %s = %s", p, o, k, jsonString(v))
			}
		}
	}
}

func jsonEqual(a, b any) bool { return jsonString(a) == jsonString(b) }

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// tableDataFiles lists the data files the table's current snapshot
// references.
func tableDataFiles(t *testing.T, cat icebergcatalog.Catalog, topic string) []string {
	t.Helper()
	ctx := testCtx(t, time.Minute)
	tbl, err := cat.LoadTable(ctx, itable.Identifier{"sediment", topic})
	if err != nil {
		t.Fatalf("load table %s: %v", topic, err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatalf("plan files of %s: %v", topic, err)
	}
	var out []string
	for _, task := range tasks {
		out = append(out, task.File.FilePath())
	}
	return out
}
