package catalog

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"
)

// TestLocalWarehouseIOIsSynced: file:// and plain paths load syncedFS, and
// its writes (Create and WriteFile, into folders that do not exist yet)
// read back.
func TestLocalWarehouseIOIsSynced(t *testing.T) {
	dir := t.TempDir()
	for _, loc := range []string{"file://" + dir, dir} {
		fsys, err := icebergio.LoadFS(context.Background(), nil, loc)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := fsys.(syncedFS); !ok {
			t.Fatalf("LoadFS(%q) = %T, want syncedFS", loc, fsys)
		}
	}
	fsys := syncedFS{}
	a := "file://" + filepath.Join(dir, "tables", "a", "b", "f.parquet")
	w, err := fsys.Create(a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, bytes.NewReader([]byte("data"))); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	m := filepath.Join(dir, "tables", "c", "v1.metadata.json")
	if err := fsys.WriteFile(m, []byte("meta")); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{filepath.Join(dir, "tables", "a", "b", "f.parquet"): "data", m: "meta"} {
		if got, err := os.ReadFile(path); err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", path, got, err, want)
		}
	}
	if _, err := fsys.Create("file://otherhost/x"); err == nil {
		t.Error("a file URL with a host: no error")
	}
}

func TestMkdirsReportsCreated(t *testing.T) {
	dir := t.TempDir()
	got, err := mkdirs(filepath.Join(dir, "x", "y"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "x"), filepath.Join(dir, "x", "y")}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("mkdirs = %v, want %v", got, want)
	}
	if got, _ := mkdirs(filepath.Join(dir, "x", "y")); len(got) != 0 {
		t.Errorf("mkdirs of an existing folder = %v, want none", got)
	}
}
