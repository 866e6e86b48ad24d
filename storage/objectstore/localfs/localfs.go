package localfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// ErrClosed is returned by every call made after Close.
var ErrClosed = errors.New("localfs: store is closed")

// staleTemp is the age after which Open deletes a leftover temp file.
const staleTemp = time.Hour

// Store is an object store in a local folder; see the package doc. It is
// safe for concurrent use.
type Store struct {
	root    string // absolute path of the folder
	staging string // root/stagingName, where puts write their temp files
	closed  atomic.Bool

	// mu guards the namespace under root: it is held around every rename,
	// link, remove, mkdir and rmdir there, and around the ETag check an
	// IfMatch put makes before its rename.
	mu sync.Mutex
}

// Open returns the store kept in dir, creating the folder if needed, and
// removes temp files older than an hour left there by crashed puts.
func Open(dir string) (*Store, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("localfs: open %s: %w", dir, err)
	}
	s := &Store{root: root, staging: filepath.Join(root, stagingName)}
	if err := os.MkdirAll(s.staging, 0o755); err != nil {
		return nil, fmt.Errorf("localfs: open %s: %w", dir, err)
	}
	sweepStaging(s.staging, staleTemp)
	return s, nil
}

// Close marks the store closed; later calls fail with ErrClosed. Calls in
// flight finish normally.
func (s *Store) Close() error {
	s.closed.Store(true)
	return nil
}

// begin checks that a call of op on key may start and returns the key's
// file path.
func (s *Store) begin(ctx context.Context, op, key string) (string, error) {
	if s.closed.Load() {
		return "", fmt.Errorf("localfs: %s %q: %w", op, key, ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("localfs: %s %q: %w", op, key, err)
	}
	p, err := s.path(key)
	if err != nil {
		return "", fmt.Errorf("localfs: %s: %w", op, err)
	}
	return p, nil
}

// sweepStaging removes, best-effort, the temp files in dir older than age.
func sweepStaging(dir string, age time.Duration) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		info, err := e.Info()
		if err == nil && time.Since(info.ModTime()) > age {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// syncDir fsyncs a directory, making the names created or removed in it
// durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return syncClose(d)
}

// syncClose fsyncs and closes f.
func syncClose(f *os.File) error {
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
