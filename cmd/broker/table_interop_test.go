//go:build interop

package main

// DuckDB (npm @duckdb/node-api, installed into .bin/node by `make
// interop`) reads the Parquet files a table topic's table references: an
// independent reader's check of what the converter wrote. And the broker
// converts table topics into the catalogs --table-catalog names besides the
// embedded one: a real PostgreSQL, and a REST catalog (our own spec server).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/table/catalog"
	"github.com/sediment-io/sediment/table/catalog/pgtest"
	"github.com/sediment-io/sediment/table/catalog/resttest"
)

// duckDBNodeVersion is the @duckdb/node-api the Makefile pins.
const duckDBNodeVersion = "1.5.6-r.1"

// duckDBModules is .bin/node/node_modules at the module root, where `make
// interop` installs @duckdb/node-api; the test fails, naming the install
// command, when it is not there.
func duckDBModules(t *testing.T) string {
	t.Helper()
	requireTool(t, "node", "nodejs")
	dir, err := filepath.Abs(filepath.Join("..", "..", ".bin", "node", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "@duckdb", "node-api", "package.json")); err != nil {
		t.Fatalf("@duckdb/node-api not in %s: run `make interop` (installs it) or "+
			"`npm install --prefix .bin/node --no-save @duckdb/node-api@%s` at the repository root", dir, duckDBNodeVersion)
	}
	return dir
}

// duckDBRows runs testdata/duckdb_read.cjs over files and returns its rows.
func duckDBRows(t *testing.T, modules string, files []string) []map[string]any {
	t.Helper()
	in, err := json.Marshal(files)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join("testdata", "duckdb_read.cjs"))
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("duckdb_read.cjs: %v\n%s", err, stderr.String())
	}
	var rows []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if line == "" {
			continue
		}
		var row map[string]any
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("DuckDB row %q: %v", line, err)
		}
		rows = append(rows, row)
	}
	return rows
}

// duckValue is the JSON value of record i: nested object, list, a double,
// and a field that is null in every other record.
func duckValue(i int) map[string]any {
	v := map[string]any{
		"id":     i,
		"name":   fmt.Sprintf("name-%04d", i),
		"price":  float64(i) + 0.25,
		"tags":   []any{"t", fmt.Sprint(i % 7)},
		"nested": map[string]any{"depth": i % 3, "label": fmt.Sprintf("n%d", i)},
		"note":   nil,
	}
	if i%2 == 1 {
		v["note"] = fmt.Sprintf("odd %d", i)
	}
	return v
}

// TestInteropDuckDBReadsTable produces JSON records to a table topic,
// waits for the table to hold them, lists the data files its current
// snapshot references (iceberg-go) and reads them with DuckDB's
// read_parquet: the same number of rows, and every row's partition,
// offset, key, timestamp and values are the records produced.
func TestInteropDuckDBReadsTable(t *testing.T) {
	modules := duckDBModules(t)
	dataDir := t.TempDir()
	tb := startTestBroker(t, dataDir)
	const topic, partitions, n = "duck-orders", 3, 600
	createTableTopic(t, tb.addr, topic, partitions, nil)
	values := make([]string, n)
	for i := range values {
		b, err := json.Marshal(duckValue(i))
		if err != nil {
			t.Fatal(err)
		}
		values[i] = string(b)
	}
	recs := produceValues(t, tb.addr, topic, partitions, values)

	cat := openCatalog(t, dataDir, "")
	waitTableRows(t, cat, topic, n)
	files := tableDataFiles(t, cat, topic)
	if len(files) == 0 {
		t.Fatal("the table's current snapshot references no data files")
	}
	local := make([]string, len(files))
	for i, f := range files {
		if !strings.HasPrefix(f, "file://") {
			t.Fatalf("data file %s is not a local file", f)
		}
		local[i] = strings.TrimPrefix(f, "file://")
	}
	rows := duckDBRows(t, modules, local)
	if len(rows) != n {
		t.Fatalf("DuckDB read %d rows from %d files, want %d", len(rows), len(files), n)
	}
	checkDuckRows(t, rows, recs)
}

// checkDuckRows compares DuckDB's rows with the produced records, matched
// by partition and offset.
func checkDuckRows(t *testing.T, rows []map[string]any, recs []*kgo.Record) {
	t.Helper()
	byPos := map[[2]int64]int{}
	for i, r := range recs {
		byPos[[2]int64{int64(r.Partition), r.Offset}] = i
	}
	for _, row := range rows {
		p, o := int64(row["p"].(float64)), int64(row["o"].(float64))
		i, ok := byPos[[2]int64{p, o}]
		if !ok {
			t.Fatalf("DuckDB row at partition %d offset %d was never produced: %v", p, o, row)
		}
		delete(byPos, [2]int64{p, o})
		want := duckValue(i)
		want["p"], want["o"] = p, o
		want["key"] = string(recs[i].Key)
		want["ts"] = recs[i].Timestamp.UnixMilli()
		if got, w := jsonString(row), jsonString(normalizeJSON(t, want)); got != w {
			t.Fatalf("record %d (partition %d offset %d):\nDuckDB   %s\nproduced %s", i, p, o, got, w)
		}
	}
	if len(byPos) != 0 {
		t.Fatalf("%d produced records missing from DuckDB's rows", len(byPos))
	}
}

// normalizeJSON round-trips v through JSON, so that it compares with a
// decoded row (numbers as float64, keys sorted).
func normalizeJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestInteropTableCatalogs runs a broker with --table-catalog on a real
// PostgreSQL and on a REST catalog (resttest, our own spec server backed
// by a SQL catalog): the records produced to a table topic are read back
// through the same catalog, each exactly once, and the table's files are
// in the broker's object store under tables/.
func TestInteropTableCatalogs(t *testing.T) {
	for _, tc := range []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"postgres", func(t *testing.T) string { return pgtest.Start(t) }},
		{"rest", func(t *testing.T) string { return "rest+" + resttest.Start(t, "api/catalog", "tok").URL + "?token=tok" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			catURL := tc.url(t)
			dataDir := t.TempDir()
			tb := startTestBroker(t, dataDir, "--table-catalog", catURL)
			const topic, partitions, n = "orders", 2, 300
			createTableTopic(t, tb.addr, topic, partitions, nil)
			values := make([]string, n)
			for i := range values {
				values[i] = fmt.Sprintf(`{"id":%d,"name":"n%d"}`, i, i)
			}
			recs := produceValues(t, tb.addr, topic, partitions, values)
			cat, err := catalog.Open(testCtx(t, time.Minute), catURL, catalog.Options{DataDir: dataDir})
			if err != nil {
				t.Fatal(err)
			}
			rows := waitTableRows(t, cat, topic, n)
			checkRowsOnce(t, rows, recs)
			dir := "file://" + filepath.Join(dataDir, "objects", "tables", "sediment.db", topic) + "/"
			for _, f := range tableDataFiles(t, cat, topic) {
				if !strings.HasPrefix(f, dir) {
					t.Errorf("data file %s is not under %s", f, dir)
				}
			}
		})
	}
}

// checkRowsOnce checks that rows hold each record exactly once, with its
// id.
func checkRowsOnce(t *testing.T, rows []tableRow, recs []*kgo.Record) {
	t.Helper()
	if len(rows) != len(recs) {
		t.Fatalf("table holds %d rows, want %d", len(rows), len(recs))
	}
	want := map[[2]int64]int{}
	for i, r := range recs {
		want[[2]int64{int64(r.Partition), r.Offset}] = i
	}
	for _, row := range rows {
		p, o := row.partOff()
		i, ok := want[[2]int64{int64(p), o}]
		if !ok {
			t.Fatalf("row at partition %d offset %d: not produced, or twice", p, o)
		}
		delete(want, [2]int64{int64(p), o})
		if id, _ := row["id"].(float64); int(id) != i {
			t.Fatalf("row at partition %d offset %d has id %v, want %d", p, o, row["id"], i)
		}
	}
}
