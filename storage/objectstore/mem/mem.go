// Package mem is an in-memory objectstore.Store for unit tests, with fault
// injection: failed, hung and slow calls, an outage switch, call counters and
// a hook after each successful put (see faults.go).
//
// It keeps every object in one map under one mutex, so every operation is
// linearizable and conditional puts behave exactly as the interface says. It
// never persists anything.
package mem

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// ErrClosed is returned by every call made after Close.
var ErrClosed = errors.New("mem: store is closed")

// object is one stored value. Its data is never modified after the put.
type object struct {
	data     []byte
	etag     string
	modified time.Time
}

// Store is an in-memory object store. The zero value is not usable; call
// New. It is safe for concurrent use.
type Store struct {
	faults faults

	mu      sync.Mutex // guards objects and closed
	objects map[string]object
	closed  bool
}

var _ objectstore.Store = (*Store)(nil)

// New returns an empty store with no faults injected.
func New() *Store {
	s := &Store{objects: make(map[string]object)}
	s.faults.init()
	return s
}

// Close marks the store closed and releases every hung call. Later calls fail
// with ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.Unhang()
	return nil
}

// begin counts one call of op, runs the injected faults and validates key
// (a List prefix needs no validation). It returns the error the call must
// fail with, or nil.
func (s *Store) begin(ctx context.Context, op Op, key string) error {
	if err := s.faults.before(ctx, op); err != nil {
		return fmt.Errorf("mem: %s %q: %w", op, key, err)
	}
	if op != OpList {
		if err := objectstore.ValidateKey(key); err != nil {
			return fmt.Errorf("mem: %s: %w", op, err)
		}
	}
	return nil
}

// lookup returns the object under key, or an error naming op when it is
// missing or the store is closed.
func (s *Store) lookup(op Op, key string) (object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return object{}, fmt.Errorf("mem: %s %q: %w", op, key, ErrClosed)
	}
	o, ok := s.objects[key]
	if !ok {
		return object{}, fmt.Errorf("mem: %s %q: %w", op, key, objectstore.ErrNotExist)
	}
	return o, nil
}

// info describes o as the object stored under key.
func (o object) info(key string) objectstore.Info {
	return objectstore.Info{Key: key, Size: int64(len(o.data)), ETag: o.etag, Modified: o.modified}
}
