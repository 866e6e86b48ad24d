package localfs_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/localfs"
)

// files returns the regular files under dir, relative to it, sorted.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	slices.Sort(out)
	return out
}

func put(t *testing.T, s objectstore.Store, key string, cond objectstore.Condition) error {
	t.Helper()
	_, err := s.Put(t.Context(), key, []byte("data of "+key), cond)
	return err
}

func TestRejectsEscapingKeys(t *testing.T) {
	parent := t.TempDir()
	s := open(t, filepath.Join(parent, "bucket"))
	for _, key := range []string{"", ".", "..", "../x", "a/../../x", "/etc/passwd",
		`a\..\x`, `..\x`, "a/./b", "a//b", "a/", "a\x00b"} {
		if err := put(t, s, key, objectstore.Condition{}); !errors.Is(err, objectstore.ErrInvalidKey) {
			t.Errorf("Put(%q) = %v, want ErrInvalidKey", key, err)
		}
		if _, err := s.Stat(t.Context(), key); !errors.Is(err, objectstore.ErrInvalidKey) {
			t.Errorf("Stat(%q) = %v, want ErrInvalidKey", key, err)
		}
		if err := s.Delete(t.Context(), key); !errors.Is(err, objectstore.ErrInvalidKey) {
			t.Errorf("Delete(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
	if got := files(t, parent); len(got) != 0 {
		t.Errorf("files written: %q", got)
	}
}

func TestLayoutAndNoTempFiles(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	for _, key := range []string{"a", "a/b", "a/b/c", "50%/x", "p/q.obj"} {
		if err := put(t, s, key, objectstore.Condition{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := put(t, s, "a", objectstore.Condition{IfAbsent: true}); !objectstore.IsPrecondition(err) {
		t.Fatalf("losing IfAbsent put = %v", err)
	}
	want := []string{"50%25%/x", "a", "a%/b", "a%/b%/c", "p%/q.obj"}
	if got := files(t, dir); !slices.Equal(got, want) {
		t.Errorf("files = %q, want %q (no temp files)", got, want)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "a%", "b%", "c"))
	if err != nil || string(raw) != "data of a/b/c" {
		t.Errorf("a%%/b%%/c holds %q, %v; want the raw object bytes", raw, err)
	}
}

func TestDeleteRemovesEmptyDirectories(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	for _, key := range []string{"x/y/z", "x/w"} {
		if err := put(t, s, key, objectstore.Condition{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Delete(t.Context(), "x/y/z"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "x%", "y%")); !os.IsNotExist(err) {
		t.Errorf("x%%/y%% still there after its last object went: %v", err)
	}
	if err := s.Delete(t.Context(), "x/w"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "x%")); !os.IsNotExist(err) {
		t.Errorf("x%% still there after its last object went: %v", err)
	}
}

func TestListIgnoresForeignNames(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	if err := put(t, s, "k/v", objectstore.Condition{}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"lost+found", "nomark/sub", "k%/bad%zz%"} {
		mustWrite(t, filepath.Join(dir, d, "f"))
	}
	for _, f := range []string{"stray%", "k%/a%2", `k%/back\slash`, "k%/tab\tname"} {
		mustWrite(t, filepath.Join(dir, f))
	}
	if err := os.Symlink("k%/v", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	var keys []string
	err := s.List(t.Context(), "", "", func(info objectstore.Info) bool {
		keys = append(keys, info.Key)
		return true
	})
	if err != nil || !slices.Equal(keys, []string{"k/v"}) {
		t.Errorf("List = %q, %v; want only k/v", keys, err)
	}
}

func mustWrite(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("foreign"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestOpenSweepsStaleTempFiles(t *testing.T) {
	dir := t.TempDir()
	open(t, dir)
	stale, fresh := filepath.Join(dir, ".%tmp", "put-1"), filepath.Join(dir, ".%tmp", "put-2")
	mustWrite(t, stale)
	mustWrite(t, fresh)
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	open(t, dir)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temp file survived Open: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("fresh temp file (a put in flight?) removed by Open: %v", err)
	}
}

func TestETagSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	etag, err := s.Put(t.Context(), "k", []byte("content"), objectstore.Condition{})
	if err != nil {
		t.Fatal(err)
	}
	if etag != objectstore.ContentETag([]byte("content")) {
		t.Errorf("ETag %s is not objectstore.ContentETag of the content", etag)
	}
	s.Close()
	info, err := open(t, dir).Stat(t.Context(), "k")
	if err != nil || info.ETag != etag {
		t.Errorf("Stat after reopen = %+v, %v; want ETag %s", info, err, etag)
	}
}

func TestClosed(t *testing.T) {
	s := open(t, t.TempDir())
	s.Close()
	err := put(t, s, "k", objectstore.Condition{})
	if !errors.Is(err, localfs.ErrClosed) {
		t.Errorf("Put after Close = %v, want ErrClosed", err)
	}
	err = s.List(context.Background(), "", "", func(objectstore.Info) bool { return true })
	if !errors.Is(err, localfs.ErrClosed) {
		t.Errorf("List after Close = %v, want ErrClosed", err)
	}
}

// Objects are written in 1 MiB steps handed to the disk one by one; every
// size around the step reads back whole, and no temp file is left.
func TestPutInSteps(t *testing.T) {
	dir := t.TempDir()
	s, err := localfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, n := range []int{0, 1, 1<<20 - 1, 1 << 20, 1<<20 + 1, 3<<20 + 17} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i*7 + n)
		}
		key := "steps/" + strconv.Itoa(n)
		if _, err := s.Put(ctx, key, data, objectstore.Condition{IfAbsent: true}); err != nil {
			t.Fatalf("put %d bytes: %v", n, err)
		}
		got, err := s.Get(ctx, key)
		if err != nil {
			t.Fatalf("get %d bytes: %v", n, err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: read back %d bytes that differ", n, len(got))
		}
	}
	if got := files(t, dir); len(got) != 6 {
		t.Fatalf("files after 6 puts: %v", got)
	}
}
