package localfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// List calls fn for every object whose key starts with prefix and sorts
// after after, in lexical key order. It holds no lock, so fn may call the
// store; objects put or deleted during the walk may or may not be seen.
func (s *Store) List(ctx context.Context, prefix, after string, fn func(objectstore.Info) bool) error {
	if s.closed.Load() {
		return fmt.Errorf("localfs: list %q: %w", prefix, ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("localfs: list %q: %w", prefix, err)
	}
	w := walker{ctx: ctx, prefix: prefix, after: after, fn: fn}
	if _, err := w.walk(s.root, ""); err != nil {
		return fmt.Errorf("localfs: list %q: %w", prefix, err)
	}
	return nil
}

// walker is one List in progress.
type walker struct {
	ctx    context.Context
	prefix string
	after  string // keys up to it are not delivered
	fn     func(objectstore.Info) bool
}

// walk visits the directory dir, every key under which starts with
// keyPrefix. It returns false once fn has asked to stop.
func (w *walker) walk(dir, keyPrefix string) (bool, error) {
	entries, err := readEntries(dir)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if err := w.ctx.Err(); err != nil {
			return false, err
		}
		more, err := w.visit(filepath.Join(dir, e.name), keyPrefix+e.seg, e.dir)
		if !more || err != nil {
			return false, err
		}
	}
	return true, nil
}

// visit handles one entry: a directory standing for the prefix key+"/", or
// the object file of key. Subtrees that cannot match the prefix, or whose
// keys all sort before after, are skipped.
func (w *walker) visit(path, key string, dir bool) (bool, error) {
	if dir {
		sub := key + "/"
		if !strings.HasPrefix(sub, w.prefix) && !strings.HasPrefix(w.prefix, sub) {
			return true, nil
		}
		if sub < w.after && !strings.HasPrefix(w.after, sub) {
			return true, nil // every key under sub sorts before after
		}
		return w.walk(path, sub)
	}
	if !strings.HasPrefix(key, w.prefix) || key <= w.after {
		return true, nil
	}
	info, err := statFile(path, key)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil // deleted since the directory was read
	}
	if err != nil {
		return false, err
	}
	return w.fn(info), nil
}

// entry is one directory entry that belongs to the key space.
type entry struct {
	name string // file name
	seg  string // decoded key segment
	dir  bool   // a directory standing for a key prefix
}

// order is what sorts an entry among its siblings so that a depth-first walk
// yields full keys in lexical order: a directory's keys all start seg+"/".
func (e entry) order() string {
	if e.dir {
		return e.seg + "/"
	}
	return e.seg
}

// readEntries returns the key-space entries of dir in walk order. A
// directory removed meanwhile has none.
func readEntries(dir string) ([]entry, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	entries := make([]entry, 0, len(des))
	for _, de := range des {
		if e, ok := parseEntry(de); ok {
			entries = append(entries, e)
		}
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.order(), b.order()) })
	return entries, nil
}

// parseEntry decodes a directory entry, rejecting those that no key maps to.
func parseEntry(de fs.DirEntry) (entry, bool) {
	name := de.Name()
	switch {
	case de.IsDir() && strings.HasSuffix(name, dirMark):
		seg, ok := decodeName(strings.TrimSuffix(name, dirMark))
		return entry{name: name, seg: seg, dir: true}, ok
	case de.Type().IsRegular():
		seg, ok := decodeName(name)
		return entry{name: name, seg: seg}, ok
	}
	return entry{}, false
}
