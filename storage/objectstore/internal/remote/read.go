package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// Get returns the whole object.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	if err := s.checkKey("get", key); err != nil {
		return nil, err
	}
	return s.read(ctx, "get", key, 0, -1)
}

// GetRange returns up to length bytes at off. S3 answers a range that
// starts at or past the end, and any range of an empty object, with 416,
// and a zero length cannot be asked for at all: those cases are settled
// with a HEAD, so that a range at the end is empty and only one past it is
// ErrInvalidRange, as the interface says.
func (s *Store) GetRange(ctx context.Context, key string, off, length int64) ([]byte, error) {
	if err := s.checkKey("get range", key); err != nil {
		return nil, err
	}
	if off < 0 || length < 0 {
		return nil, fmt.Errorf("%s: get range %s [%d,+%d): %w", s.name, s.where(key), off, length, objectstore.ErrInvalidRange)
	}
	if length == 0 {
		return s.emptyRange(ctx, key, off)
	}
	data, err := s.read(ctx, "get range", key, off, min(length, math.MaxInt64-off))
	if errors.Is(err, objectstore.ErrInvalidRange) {
		return s.emptyRange(ctx, key, off)
	}
	return data, err
}

// OpenRange starts a GET of up to length bytes at off and returns its body
// to be read as it arrives. Opening is retried like any read; the body is
// not: a reader that fails mid-way opens again where it stopped. The body
// is bound to its own context, not ctx, and holds its connection until
// Close.
func (s *Store) OpenRange(ctx context.Context, key string, off, length int64) (io.ReadCloser, error) {
	if err := s.checkKey("open range", key); err != nil {
		return nil, err
	}
	if off < 0 || length < 0 {
		return nil, fmt.Errorf("%s: open range %s [%d,+%d): %w", s.name, s.where(key), off, length, objectstore.ErrInvalidRange)
	}
	empty := func() (io.ReadCloser, error) { // as GetRange answers ranges with no bytes
		if _, err := s.emptyRange(ctx, key, off); err != nil {
			return nil, err
		}
		return io.NopCloser(bytes.NewReader(nil)), nil
	}
	if length == 0 {
		return empty()
	}
	var body *streamBody
	_, err := s.do(ctx, "open range", 0, func(a *attempt) error {
		bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		// The attempt's deadline and ctx bound the opening only.
		stop := context.AfterFunc(a.ctx, cancel)
		b, _, err := s.wire.Open(bctx, s.full(key), off, min(length, math.MaxInt64-off))
		if !stop() && err == nil { // the attempt ended as the body arrived
			b.Close()
			err = context.Cause(a.ctx)
		}
		if err != nil {
			cancel()
			return err
		}
		body = &streamBody{body: b, cancel: cancel, what: s.name + ": read " + s.where(key)}
		return nil
	})
	if err != nil {
		if err = s.fail("open range", key, err, false); errors.Is(err, objectstore.ErrInvalidRange) {
			return empty()
		}
		return nil, err
	}
	return body, nil
}

// streamBody is an OpenRange body: its errors name the object, and Close
// ends its request.
type streamBody struct {
	body   io.ReadCloser
	cancel context.CancelFunc
	what   string
}

func (b *streamBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%s: %w", b.what, err)
	}
	return n, err
}

func (b *streamBody) Close() error {
	err := b.body.Close()
	b.cancel()
	return err
}

// emptyRange answers a read that returns no bytes: empty when off is at
// most the size, ErrInvalidRange past it.
func (s *Store) emptyRange(ctx context.Context, key string, off int64) ([]byte, error) {
	info, err := s.Stat(ctx, key)
	if err != nil {
		return nil, err
	}
	if off > info.Size {
		return nil, fmt.Errorf("%s: get range %s at %d of %d bytes: %w", s.name, s.where(key), off, info.Size, objectstore.ErrInvalidRange)
	}
	return []byte{}, nil
}

// read GETs length bytes at off (length < 0: all), retrying transient
// failures; each attempt's deadline covers the body once its size is known.
func (s *Store) read(ctx context.Context, op, key string, off, length int64) ([]byte, error) {
	var data []byte
	_, err := s.do(ctx, op, 0, func(a *attempt) error {
		body, size, err := s.wire.Open(a.ctx, s.full(key), off, length)
		if err != nil {
			return err
		}
		defer body.Close()
		a.expect(size)
		data, err = readBody(body, size)
		return err
	})
	if err != nil {
		return nil, s.fail(op, key, err, false)
	}
	return data, nil
}

// readBody reads a body of size bytes (-1: unknown) into one buffer.
func readBody(r io.Reader, size int64) ([]byte, error) {
	if size < 0 {
		return io.ReadAll(r)
	}
	buf := make([]byte, size)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, fmt.Errorf("body of %d bytes: %w", size, err)
	}
	return buf, nil
}

// Stat describes the object with a HEAD.
func (s *Store) Stat(ctx context.Context, key string) (objectstore.Info, error) {
	if err := s.checkKey("stat", key); err != nil {
		return objectstore.Info{}, err
	}
	var info objectstore.Info
	_, err := s.do(ctx, "stat", 0, func(a *attempt) error {
		var err error
		info, err = s.wire.Head(a.ctx, s.full(key))
		return err
	})
	if err != nil {
		return objectstore.Info{}, s.fail("stat", key, err, false)
	}
	info.Key = s.full(key)
	return s.info(info), nil
}
