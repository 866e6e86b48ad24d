package wal

import (
	"io"
	"os"
	"sort"
)

// FS is the filesystem the WAL uses. It is a seam for fault injection:
// MemFS implements it in memory and can crash and fail on demand. Names are
// paths as built with filepath.Join from Options.Dir.
type FS interface {
	// Create creates name, or truncates it if it exists, for reading and
	// appending.
	Create(name string) (File, error)
	// OpenFile opens an existing file for reading and appending.
	OpenFile(name string) (File, error)
	// Open opens an existing file for reading only.
	Open(name string) (File, error)
	// Rename atomically replaces newname with oldname. It is durable only
	// after SyncDir of the directory.
	Rename(oldname, newname string) error
	// Remove deletes name. It is durable only after SyncDir.
	Remove(name string) error
	// ReadDir returns the names (not paths) of the entries of dir, sorted.
	ReadDir(dir string) ([]string, error)
	// MkdirAll creates dir and any missing parents.
	MkdirAll(dir string) error
	// SyncDir fsyncs the directory dir, making creates, renames and removes
	// in it durable.
	SyncDir(dir string) error
	// Stat returns the size of name in bytes.
	Stat(name string) (int64, error)
}

// File is an open file. Write always appends at the end of the file.
type File interface {
	io.ReaderAt
	// Write appends p at the end of the file.
	Write(p []byte) (int, error)
	// Sync makes everything written so far durable (fsync).
	Sync() error
	// Truncate changes the size of the file; writes continue at the new end.
	Truncate(size int64) error
	// Size returns the current size of the file.
	Size() (int64, error)
	// Close releases the file.
	Close() error
}

// OSFS is the real filesystem.
type OSFS struct{}

var _ FS = OSFS{}

// Create implements FS.
func (OSFS) Create(name string) (File, error) {
	return openOS(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND)
}

// OpenFile implements FS.
func (OSFS) OpenFile(name string) (File, error) {
	return openOS(name, os.O_RDWR|os.O_APPEND)
}

// Open implements FS.
func (OSFS) Open(name string) (File, error) { return openOS(name, os.O_RDONLY) }

// Rename implements FS.
func (OSFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

// Remove implements FS.
func (OSFS) Remove(name string) error { return os.Remove(name) }

// MkdirAll implements FS.
func (OSFS) MkdirAll(dir string) error { return os.MkdirAll(dir, 0o755) }

// ReadDir implements FS.
func (OSFS) ReadDir(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	sort.Strings(names)
	return names, nil
}

// SyncDir implements FS.
func (OSFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Stat implements FS.
func (OSFS) Stat(name string) (int64, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// osFile adds Size to *os.File.
type osFile struct{ *os.File }

func openOS(name string, flag int) (File, error) {
	f, err := os.OpenFile(name, flag, 0o644)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

// Size implements File.
func (f osFile) Size() (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
