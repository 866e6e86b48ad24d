package catalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"
)

// iceberg-go's local file IO leaves every file it writes (Parquet data,
// manifests, manifest lists, table metadata) in the page cache, so a
// machine crash after a catalog commit could leave the catalog pointing at
// a metadata file that never reached the disk: the table would not load
// again. The broker promises that nothing acknowledged is lost, so the
// file:// and plain-path schemes are registered again, for the whole
// process, with syncedFS: a file is fsynced, then its directory and every
// directory created for it, before its Close (or WriteFile) returns.
func init() {
	factory := func(context.Context, *url.URL, map[string]string) (icebergio.IO, error) {
		return syncedFS{}, nil
	}
	for _, scheme := range []string{"file", ""} {
		icebergio.Unregister(scheme) // iceberg-go's LocalFS
		icebergio.Register(scheme, factory)
	}
}

// syncedFS is iceberg-go's LocalFS whose writes are durable when they
// return.
type syncedFS struct{ icebergio.LocalFS }

// Create creates the named file for writing; Close makes it durable.
func (syncedFS) Create(name string) (icebergio.FileWriter, error) {
	path, err := syncedPath(name)
	if err != nil {
		return nil, err
	}
	created, err := mkdirs(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &syncedFile{File: f, created: created}, nil
}

// WriteFile writes p to the named file, durably.
func (s syncedFS) WriteFile(name string, p []byte) error {
	w, err := s.Create(name)
	if err != nil {
		return err
	}
	if _, err := w.Write(p); err != nil {
		_ = w.(*syncedFile).File.Close()
		return err
	}
	return w.Close()
}

// syncedPath is the local path of a file:// URL or a plain path.
func syncedPath(name string) (string, error) {
	if !strings.HasPrefix(name, "file:") {
		return name, nil
	}
	u, err := url.Parse(name)
	if err != nil {
		return "", fmt.Errorf("catalog: local file %q: %w", name, err)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("catalog: local file %q: a file URL has no host", name)
	}
	return filepath.FromSlash(u.Path), nil
}

// mkdirs creates dir and its missing parents, and returns those it
// created, outermost first.
func mkdirs(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || !errors.Is(err, fs.ErrNotExist) || filepath.Dir(d) == d {
			break
		}
		missing = append([]string{d}, missing...)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return missing, nil
}

// syncedFile is a file being written; Close fsyncs it, its directory and
// the parents of the directories created for it.
type syncedFile struct {
	*os.File
	created []string // directories Create made, outermost first
}

// Close makes the file and its directory entries durable.
func (f *syncedFile) Close() error {
	if err := f.File.Sync(); err != nil {
		_ = f.File.Close()
		return fmt.Errorf("catalog: fsync %s: %w", f.Name(), err)
	}
	if err := f.File.Close(); err != nil {
		return err
	}
	dirs := []string{filepath.Dir(f.Name())}
	for _, d := range f.created {
		dirs = append(dirs, filepath.Dir(d))
	}
	for _, d := range dirs {
		if err := syncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// syncDir fsyncs a directory, making the entries in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("catalog: fsync directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("catalog: fsync directory %s: %w", dir, err)
	}
	return nil
}
