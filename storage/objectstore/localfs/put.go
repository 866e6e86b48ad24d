package localfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// Put writes data to a synced temp file and moves it into place under key
// if cond holds, so readers see either the old object or the new one.
func (s *Store) Put(ctx context.Context, key string, data []byte, cond objectstore.Condition) (string, error) {
	p, err := s.begin(ctx, "put", key)
	if err != nil {
		return "", err
	}
	etag := objectstore.ContentETag(data)
	tmp, err := s.writeTemp(data, etag)
	if err != nil {
		return "", fmt.Errorf("localfs: put %q: %w", key, err)
	}
	// Gone after a rename; after a link or a failure, the temp name is litter.
	defer os.Remove(tmp)
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("localfs: put %q: %w", key, err)
	}
	dir, err := s.commit(p, tmp, cond)
	if err != nil {
		return "", fmt.Errorf("localfs: put %q: %w", key, err)
	}
	// Synced after mu is released, so one put's fsync does not hold up others.
	if err := syncClose(dir); err != nil {
		return "", fmt.Errorf("localfs: put %q: sync directory: %w", key, err)
	}
	return etag, nil
}

// writeTemp writes data to a new file in the staging directory, records
// its ETag, fsyncs it and returns its path.
func (s *Store) writeTemp(data []byte, etag string) (string, error) {
	f, err := os.CreateTemp(s.staging, "put-*")
	if err != nil {
		return "", fmt.Errorf("create temp file: %w", err)
	}
	err = writeInSteps(f, data)
	if err == nil {
		setETagAttr(f, etag)
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("write temp file %s: %w", f.Name(), err)
	}
	return f.Name(), nil
}

// writeStep is the unit in which writeInSteps hands an object to the disk.
const writeStep = 1 << 20

// writeInSteps writes data to f one step at a time, starting the
// writeback of each step as soon as it is written and waiting for the one
// before it. A large object (a compacted segment, tens of MiB) then never
// sits in the page cache as one dirty run for the final fsync to write
// back at once: on ext4 such a flush held up the WAL's fsyncs, and every
// produce waiting on them, for 50-300 ms. Small objects take one step.
func writeInSteps(f *os.File, data []byte) error {
	for off := 0; off < len(data); off += writeStep {
		step := data[off:min(off+writeStep, len(data))]
		if _, err := f.Write(step); err != nil {
			return err
		}
		startWriteback(f, int64(off), int64(len(step)))
		if off > 0 {
			if err := awaitWriteback(f, int64(off-writeStep), writeStep); err != nil {
				return err
			}
		}
	}
	return nil
}

// commit moves the synced temp file to p if cond holds and returns the
// parent directory, open, for the caller to fsync. Holding mu makes check and
// move one step for this Store.
func (s *Store) commit(p, tmp string, cond objectstore.Condition) (*os.File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := checkMatchLocked(p, cond.IfMatch); err != nil {
		return nil, err
	}
	dir := filepath.Dir(p)
	if err := s.mkdirsLocked(dir); err != nil {
		return nil, fmt.Errorf("create directory: %w", err)
	}
	if cond.IfAbsent {
		// link(2) fails if p exists, even if another process made it.
		if err := os.Link(tmp, p); errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("if absent: %w", objectstore.ErrPrecondition)
		} else if err != nil {
			return nil, err
		}
	} else if err := os.Rename(tmp, p); err != nil {
		return nil, err
	}
	// The handle stays valid even if a Delete removes the directory next.
	return os.Open(dir)
}

// checkMatchLocked returns ErrPrecondition unless want is empty or the
// object at p exists with ETag want.
func checkMatchLocked(p, want string) error {
	if want == "" {
		return nil
	}
	f, fi, err := openFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("if match %s: object missing: %w", want, objectstore.ErrPrecondition)
	}
	if err != nil {
		return fmt.Errorf("if match: %w", err)
	}
	defer f.Close()
	got, err := etagOf(f, fi.Size())
	if err != nil {
		return fmt.Errorf("if match: %w", err)
	}
	if got != want {
		return fmt.Errorf("if match %s: etag is %s: %w", want, got, objectstore.ErrPrecondition)
	}
	return nil
}

// mkdirsLocked creates dir and its missing parents below the root, fsyncing
// each parent so the new names survive a crash.
func (s *Store) mkdirsLocked(dir string) error {
	if dir == s.root {
		return nil
	}
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return nil
	}
	parent := filepath.Dir(dir)
	if err := s.mkdirsLocked(parent); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return syncDir(parent)
}
