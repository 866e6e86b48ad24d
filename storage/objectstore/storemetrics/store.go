package storemetrics

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// store is an objectstore.Store that records every call of the store it
// wraps.
type store struct {
	next    objectstore.Store
	backend string
	m       *Metrics
}

// Wrap returns s with its calls recorded in m under the backend label
// ("s3", "minio", "file").
func Wrap(s objectstore.Store, backend string, m *Metrics) objectstore.Store {
	return &store{next: s, backend: backend, m: m}
}

// observe starts a call of op and returns the function that records its
// end: its error and the bytes it moved in direction ("" for none).
func (s *store) observe(op string) func(err error, direction string, n int) {
	start := time.Now()
	gauge := s.m.inflight.WithLabelValues(s.backend)
	gauge.Inc()
	return func(err error, direction string, n int) {
		gauge.Dec()
		s.m.seconds.WithLabelValues(s.backend, op).Observe(time.Since(start).Seconds())
		s.m.requests.WithLabelValues(s.backend, op, outcome(err)).Inc()
		if err == nil && direction != "" {
			s.m.bytes.WithLabelValues(s.backend, direction).Add(float64(n))
		}
	}
}

// outcome names err for the outcome label.
func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case objectstore.IsNotExist(err):
		return "not_found"
	case objectstore.IsPrecondition(err):
		return "precondition_failed"
	case errors.Is(err, objectstore.ErrInvalidRange):
		return "invalid_range"
	case errors.Is(err, objectstore.ErrInvalidKey):
		return "invalid_key"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "canceled"
	}
	return "error"
}

func (s *store) Get(ctx context.Context, key string) ([]byte, error) {
	done := s.observe("get")
	data, err := s.next.Get(ctx, key)
	done(err, "in", len(data))
	return data, err
}

func (s *store) GetRange(ctx context.Context, key string, off, length int64) ([]byte, error) {
	done := s.observe("get_range")
	data, err := s.next.GetRange(ctx, key, off, length)
	done(err, "in", len(data))
	return data, err
}

// OpenRange counts as one "get_stream" request (a GET) when it opens, and its
// bytes as they are read.
func (s *store) OpenRange(ctx context.Context, key string, off, length int64) (io.ReadCloser, error) {
	done := s.observe("get_stream")
	r, err := s.next.OpenRange(ctx, key, off, length)
	done(err, "", 0)
	if err != nil {
		return nil, err
	}
	return &countingReader{ReadCloser: r, bytes: s.m.bytes.WithLabelValues(s.backend, "in")}, nil
}

// countingReader adds the bytes read through it to a counter.
type countingReader struct {
	io.ReadCloser
	bytes prometheus.Counter
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.bytes.Add(float64(n))
	return n, err
}

func (s *store) Put(ctx context.Context, key string, data []byte, cond objectstore.Condition) (string, error) {
	done := s.observe("put")
	etag, err := s.next.Put(ctx, key, data, cond)
	done(err, "out", len(data))
	return etag, err
}

func (s *store) Stat(ctx context.Context, key string) (objectstore.Info, error) {
	done := s.observe("stat")
	info, err := s.next.Stat(ctx, key)
	done(err, "", 0)
	return info, err
}

func (s *store) List(ctx context.Context, prefix, after string, fn func(objectstore.Info) bool) error {
	done := s.observe("list")
	err := s.next.List(ctx, prefix, after, fn)
	done(err, "", 0)
	return err
}

func (s *store) Delete(ctx context.Context, key string) error {
	done := s.observe("delete")
	err := s.next.Delete(ctx, key)
	done(err, "", 0)
	return err
}

func (s *store) Close() error { return s.next.Close() }
