package catalog_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	icebergcatalog "github.com/apache/iceberg-go/catalog"

	"github.com/sediment-io/sediment/table/catalog"
)

// TestSQLiteOddPaths: catalog files whose paths hold characters that URLs
// and SQLite's URI file names give a meaning to (%, ?, #, spaces), escaped
// in the sqlite:// URL as URLs want, are the files named.
func TestSQLiteOddPaths(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a b.db", "100%.db", "what?.db", "x#y.db", "%41.db"} {
		path := filepath.Join(dir, "odd dir", name)
		raw := (&url.URL{Scheme: "sqlite", Path: filepath.ToSlash(path)}).String()
		opts := catalog.Options{DataDir: filepath.Join(dir, "data")}
		cat, err := catalog.Open(context.Background(), raw, opts)
		if err != nil {
			t.Errorf("Open(%q): %v", raw, err)
			continue
		}
		closeCatalog(t, cat)
		if _, err := os.Stat(path); err != nil {
			t.Errorf("Open(%q) did not create %s: %v", raw, path, err)
		}
	}
}

// TestRelativeDataDir: a relative --data-dir (the broker's default is
// ./data) holds the catalog, and table locations are absolute.
func TestRelativeDataDir(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	opts := catalog.Options{DataDir: "data"}
	cat, err := catalog.Open(context.Background(), "", opts)
	if err != nil {
		t.Fatal(err)
	}
	loc := roundTrip(t, cat, func() icebergcatalog.Catalog { return openCatalog(t, "", opts) })
	if want := "file://" + filepath.Join(dir, "data", "objects", "tables", "sediment.db", "orders"); loc != want {
		t.Errorf("table location %q, want %q", loc, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "iceberg", "catalog.db")); err != nil {
		t.Errorf("embedded catalog: %v", err)
	}
}

// TestDataDirWithOddCharacters: a data dir whose name needs escaping in a
// file:// URL holds a table that is written and read back.
func TestDataDirWithOddCharacters(t *testing.T) {
	opts := catalog.Options{DataDir: filepath.Join(t.TempDir(), "odd dir %41 #1")}
	cat, err := catalog.Open(context.Background(), "", opts)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, cat, func() icebergcatalog.Catalog { return openCatalog(t, "", opts) })
	assertDataFilesUnder(t, filepath.Join(opts.DataDir, "objects", "tables", "sediment.db", "orders"))
}
