package catalog_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icebergcatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/sediment-io/sediment/table/catalog"
)

// events is the schema of the tables the tests write.
var events = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String},
)

// openCatalog opens rawURL with opts and closes it when the test ends.
func openCatalog(t *testing.T, rawURL string, opts catalog.Options) icebergcatalog.Catalog {
	t.Helper()
	cat, err := catalog.Open(context.Background(), rawURL, opts)
	if err != nil {
		t.Fatalf("Open(%q): %v", rawURL, err)
	}
	t.Cleanup(func() { closeCatalog(t, cat) })
	return cat
}

func closeCatalog(t *testing.T, cat icebergcatalog.Catalog) {
	t.Helper()
	c, ok := cat.(icebergcatalog.Closer)
	if !ok {
		t.Fatalf("catalog %T is no Closer", cat)
	}
	if err := c.Close(); err != nil {
		t.Errorf("close catalog: %v", err)
	}
}

// rows builds an Arrow table of the events schema with ids[i] and names[i].
func rows(t testing.TB, ids []int64, names []string) arrow.Table {
	t.Helper()
	sc, err := table.SchemaToArrowSchema(events, nil, false, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
	b.Field(1).(*array.StringBuilder).AppendValues(names, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	return array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
}

// appendRows creates the table ident and appends ids and names through one
// transaction.
func appendRows(t *testing.T, cat icebergcatalog.Catalog, name string, ids []int64, names []string) *table.Table {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.CreateTable(ctx, table.Identifier{"sediment", name}, events)
	if err != nil {
		t.Fatalf("create table: %v", err)
	}
	data := rows(t, ids, names)
	defer data.Release()
	txn := tbl.NewTransaction()
	if err := txn.AppendTable(ctx, data, 1024, iceberg.Properties{"sediment.test": "1"}); err != nil {
		t.Fatalf("append: %v", err)
	}
	tbl, err = txn.Commit(ctx)
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	return tbl
}

// scanRows reads table name back and returns its ids and names in order.
func scanRows(t *testing.T, cat icebergcatalog.Catalog, name string) ([]int64, []string) {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, table.Identifier{"sediment", name})
	if err != nil {
		t.Fatalf("load table: %v", err)
	}
	got, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	defer got.Release()
	tr := array.NewTableReader(got, 0)
	defer tr.Release()
	var ids []int64
	var names []string
	for tr.Next() {
		rec := tr.RecordBatch()
		ids = append(ids, rec.Column(0).(*array.Int64).Int64Values()...)
		col := rec.Column(1).(*array.String)
		for i := range col.Len() {
			names = append(names, col.Value(i))
		}
	}
	return ids, names
}

// roundTrip writes three rows to a new table through cat, reopens the
// catalog with reopen and checks the rows read back, returning the table's
// location.
func roundTrip(t *testing.T, cat icebergcatalog.Catalog, reopen func() icebergcatalog.Catalog) string {
	t.Helper()
	ids, names := []int64{1, 2, 3}, []string{"a", "b", "c"}
	tbl := appendRows(t, cat, "orders", ids, names)
	closeCatalog(t, cat)
	cat = reopen()
	gotIDs, gotNames := scanRows(t, cat, "orders")
	if len(gotIDs) != len(ids) {
		t.Fatalf("read %d rows, want %d", len(gotIDs), len(ids))
	}
	for i := range ids {
		if gotIDs[i] != ids[i] || gotNames[i] != names[i] {
			t.Errorf("row %d = (%d, %q), want (%d, %q)", i, gotIDs[i], gotNames[i], ids[i], names[i])
		}
	}
	return tbl.Location()
}

func TestEmbeddedSQLiteRoundTrip(t *testing.T) {
	for _, raw := range []string{"", "sqlite"} {
		t.Run("url="+raw, func(t *testing.T) {
			opts := catalog.Options{DataDir: t.TempDir()}
			cat, err := catalog.Open(context.Background(), raw, opts)
			if err != nil {
				t.Fatal(err)
			}
			loc := roundTrip(t, cat, func() icebergcatalog.Catalog { return openCatalog(t, raw, opts) })
			if _, err := os.Stat(filepath.Join(opts.DataDir, "iceberg", "catalog.db")); err != nil {
				t.Errorf("embedded catalog file: %v", err)
			}
			want := "file://" + filepath.Join(opts.DataDir, "objects", "tables", "sediment.db", "orders")
			if loc != want {
				t.Errorf("table location %q, want %q", loc, want)
			}
			assertDataFilesUnder(t, filepath.Join(opts.DataDir, "objects", "tables", "sediment.db", "orders"))
		})
	}
}

func TestSQLiteFileAndObjectStoreFolder(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "elsewhere", "cat.db")
	bucket := filepath.Join(dir, "bucket")
	opts := catalog.Options{DataDir: filepath.Join(dir, "data"), ObjectStoreURL: "file://" + bucket}
	raw := "sqlite://" + dbPath
	cat, err := catalog.Open(context.Background(), raw, opts)
	if err != nil {
		t.Fatal(err)
	}
	loc := roundTrip(t, cat, func() icebergcatalog.Catalog { return openCatalog(t, raw, opts) })
	if _, err := os.Stat(dbPath); err != nil {
		t.Errorf("catalog file: %v", err)
	}
	if !strings.HasPrefix(loc, "file://"+bucket+"/tables/") {
		t.Errorf("table location %q is not under %s/tables/", loc, bucket)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "iceberg")); err == nil {
		t.Errorf("the embedded catalog folder was created although %s was given", raw)
	}
}

// assertDataFilesUnder checks that dir holds at least one Parquet file.
func assertDataFilesUnder(t *testing.T, dir string) {
	t.Helper()
	var n int
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".parquet") {
			n++
		}
		return err
	})
	if err != nil || n == 0 {
		t.Errorf("no Parquet data files under %s (err %v)", dir, err)
	}
}

func TestNamespaceExistsAndReopenIsIdempotent(t *testing.T) {
	opts := catalog.Options{DataDir: t.TempDir()}
	for range 2 {
		cat := openCatalog(t, "", opts)
		ok, err := cat.CheckNamespaceExists(context.Background(), table.Identifier{"sediment"})
		if err != nil || !ok {
			t.Fatalf("namespace sediment exists = %v, %v", ok, err)
		}
	}
}

func TestWarehouseFile(t *testing.T) {
	loc, props, err := catalog.Warehouse(catalog.Options{DataDir: "/var/lib/sediment"})
	if err != nil {
		t.Fatal(err)
	}
	if loc != "file:///var/lib/sediment/objects/tables" || len(props) != 0 {
		t.Errorf("Warehouse = %q %v, want file:///var/lib/sediment/objects/tables and no properties", loc, props)
	}
	loc, _, err = catalog.Warehouse(catalog.Options{ObjectStoreURL: "file://rel/bucket"})
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if want := "file://" + filepath.Join(wd, "rel", "bucket", "tables"); loc != want {
		t.Errorf("relative folder: Warehouse = %q, want %q", loc, want)
	}
}
