package mem

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// Get returns a copy of the whole object.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	if err := s.begin(ctx, OpGet, key); err != nil {
		return nil, err
	}
	o, err := s.lookup(OpGet, key)
	if err != nil {
		return nil, err
	}
	return slices.Clone(o.data), nil
}

// GetRange returns a copy of up to length bytes starting at off.
func (s *Store) GetRange(ctx context.Context, key string, off, length int64) ([]byte, error) {
	if err := s.begin(ctx, OpGetRange, key); err != nil {
		return nil, err
	}
	o, err := s.lookup(OpGetRange, key)
	if err != nil {
		return nil, err
	}
	size := int64(len(o.data))
	if off < 0 || length < 0 || off > size {
		return nil, fmt.Errorf("mem: get range %q [%d,+%d) of %d bytes: %w",
			key, off, length, size, objectstore.ErrInvalidRange)
	}
	end := off + min(length, size-off)
	return slices.Clone(o.data[off:end]), nil
}

// OpenRange returns the bytes GetRange returns as a reader. It counts,
// fails and hangs as OpGetRange.
func (s *Store) OpenRange(ctx context.Context, key string, off, length int64) (io.ReadCloser, error) {
	data, err := s.GetRange(ctx, key, off, length)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

// Stat describes the object.
func (s *Store) Stat(ctx context.Context, key string) (objectstore.Info, error) {
	if err := s.begin(ctx, OpStat, key); err != nil {
		return objectstore.Info{}, err
	}
	o, err := s.lookup(OpStat, key)
	if err != nil {
		return objectstore.Info{}, err
	}
	return o.info(key), nil
}

// Put stores a copy of data under key if cond holds, then calls the OnPut
// hook.
func (s *Store) Put(ctx context.Context, key string, data []byte, cond objectstore.Condition) (string, error) {
	if err := s.begin(ctx, OpPut, key); err != nil {
		return "", err
	}
	o := object{data: slices.Clone(data), etag: objectstore.ContentETag(data), modified: time.Now()}
	if err := s.store(key, o, cond); err != nil {
		return "", err
	}
	if hook := s.faults.putHook(); hook != nil {
		hook(key)
	}
	return o.etag, nil
}

// store puts o under key if cond holds.
func (s *Store) store(key string, o object, cond objectstore.Condition) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("mem: put %q: %w", key, ErrClosed)
	}
	old, exists := s.objects[key]
	if cond.IfAbsent && exists {
		return fmt.Errorf("mem: put %q if absent: %w", key, objectstore.ErrPrecondition)
	}
	if cond.IfMatch != "" && (!exists || old.etag != cond.IfMatch) {
		return fmt.Errorf("mem: put %q if match %s: %w", key, cond.IfMatch, objectstore.ErrPrecondition)
	}
	s.objects[key] = o
	return nil
}

// Delete removes key; a missing key is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := s.begin(ctx, OpDelete, key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("mem: delete %q: %w", key, ErrClosed)
	}
	delete(s.objects, key)
	return nil
}

// List calls fn for every object under prefix sorting after after, in key
// order. It works on a snapshot taken at the start, so fn may call the
// store.
func (s *Store) List(ctx context.Context, prefix, after string, fn func(objectstore.Info) bool) error {
	if err := s.begin(ctx, OpList, prefix); err != nil {
		return err
	}
	infos, err := s.snapshot(prefix)
	if err != nil {
		return err
	}
	for _, info := range infos {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("mem: list %q: %w", prefix, err)
		}
		if info.Key <= after {
			continue
		}
		if !fn(info) {
			return nil
		}
	}
	return nil
}

// snapshot returns the objects under prefix sorted by key.
func (s *Store) snapshot(prefix string) ([]objectstore.Info, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("mem: list %q: %w", prefix, ErrClosed)
	}
	var infos []objectstore.Info
	for key, o := range s.objects {
		if strings.HasPrefix(key, prefix) {
			infos = append(infos, o.info(key))
		}
	}
	slices.SortFunc(infos, func(a, b objectstore.Info) int { return strings.Compare(a.Key, b.Key) })
	return infos, nil
}
