package localfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// Get returns the whole object.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	f, size, err := s.open(ctx, "get", key)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := readAt(f, 0, size)
	if err != nil {
		return nil, fmt.Errorf("localfs: get %q: %w", key, err)
	}
	return data, nil
}

// GetRange returns up to length bytes starting at off, reading only those.
func (s *Store) GetRange(ctx context.Context, key string, off, length int64) ([]byte, error) {
	f, n, err := s.openRange(ctx, "get range", key, off, length)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := readAt(f, off, n)
	if err != nil {
		return nil, fmt.Errorf("localfs: get range %q at %d: %w", key, off, err)
	}
	return data, nil
}

// openRange opens the object for a read of up to length bytes at off and
// returns it with the number of bytes there are to read.
func (s *Store) openRange(ctx context.Context, op, key string, off, length int64) (*os.File, int64, error) {
	f, size, err := s.open(ctx, op, key)
	if err != nil {
		return nil, 0, err
	}
	if off < 0 || length < 0 || off > size {
		f.Close()
		return nil, 0, fmt.Errorf("localfs: %s %q [%d,+%d) of %d bytes: %w",
			op, key, off, length, size, objectstore.ErrInvalidRange)
	}
	return f, min(length, size-off), nil
}

// OpenRange returns a reader of up to length bytes at off, read from the
// object's file as the caller goes; it holds the file open until Close. An
// object replaced meanwhile is read as it was when opened.
func (s *Store) OpenRange(ctx context.Context, key string, off, length int64) (io.ReadCloser, error) {
	f, n, err := s.openRange(ctx, "open range", key, off, length)
	if err != nil {
		return nil, err
	}
	return &fileRange{SectionReader: io.NewSectionReader(f, off, n), f: f, key: key}, nil
}

// fileRange is an OpenRange reader: a section of an open file. A short read
// means the file was damaged behind the store's back, as in readAt.
type fileRange struct {
	*io.SectionReader
	f   *os.File
	key string
}

func (r *fileRange) Read(p []byte) (int, error) {
	n, err := r.SectionReader.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("localfs: read %q: %w", r.key, err)
	}
	return n, err
}

func (r *fileRange) Close() error { return r.f.Close() }

// Stat describes the object.
func (s *Store) Stat(ctx context.Context, key string) (objectstore.Info, error) {
	p, err := s.begin(ctx, "stat", key)
	if err != nil {
		return objectstore.Info{}, err
	}
	info, err := statFile(p, key)
	if errors.Is(err, fs.ErrNotExist) {
		return objectstore.Info{}, fmt.Errorf("localfs: stat %q: %w", key, objectstore.ErrNotExist)
	}
	if err != nil {
		return objectstore.Info{}, fmt.Errorf("localfs: stat %q: %w", key, err)
	}
	return info, nil
}

// open opens the object for reading and returns it with its size.
func (s *Store) open(ctx context.Context, op, key string) (*os.File, int64, error) {
	p, err := s.begin(ctx, op, key)
	if err != nil {
		return nil, 0, err
	}
	f, fi, err := openFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("localfs: %s %q: %w", op, key, objectstore.ErrNotExist)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("localfs: %s %q: %w", op, key, err)
	}
	return f, fi.Size(), nil
}

// openFile opens the object file at p. Anything but a regular file counts
// as missing.
func openFile(p string) (*os.File, fs.FileInfo, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file: %w", p, fs.ErrNotExist)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// statFile describes the object file at p, which holds key. Size, time and
// ETag come from one open file, so they agree even during a concurrent put.
func statFile(p, key string) (objectstore.Info, error) {
	f, fi, err := openFile(p)
	if err != nil {
		return objectstore.Info{}, err
	}
	defer f.Close()
	etag, err := etagOf(f, fi.Size())
	if err != nil {
		return objectstore.Info{}, err
	}
	return objectstore.Info{Key: key, Size: fi.Size(), ETag: etag, Modified: fi.ModTime()}, nil
}

// readAt reads exactly n bytes at off. Objects are never changed in place,
// so a short read means the file was damaged behind the store's back.
func readAt(f *os.File, off, n int64) ([]byte, error) {
	buf := make([]byte, n)
	got, err := f.ReadAt(buf, off)
	if got == len(buf) {
		return buf, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return nil, err
}
