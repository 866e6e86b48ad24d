// Package storemetrics counts and times the calls made to an
// objectstore.Store: a wrapper that records, per backend, each call's
// operation, outcome and latency, the bytes moved each way, the calls in
// flight, and (fed by the backends) the retries made below the calls.
//
// A call is one Store method call; below it, an S3-protocol backend may
// make several HTTP requests (retries, multipart parts, a HEAD to settle a
// range). Those are visible only in the retries counter. The package never
// changes what a call does or returns.
package storemetrics

import (
	"errors"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the collectors, registered once per registry and shared by
// every wrapped store; the backend is a label.
type Metrics struct {
	requests *prometheus.CounterVec   // backend, op, outcome
	seconds  *prometheus.HistogramVec // backend, op
	bytes    *prometheus.CounterVec   // backend, direction
	inflight *prometheus.GaugeVec     // backend
	retries  *prometheus.CounterVec   // backend, op
}

// New creates the collectors and registers them with reg. When reg already
// holds them (a second store on the same registry), those are used.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sediment_objectstore_requests_total",
			Help: "Object store calls by backend, operation (get, get_range, put, stat, list, delete) and outcome (ok, not_found, precondition_failed, invalid_range, invalid_key, canceled, error).",
		}, []string{"backend", "op", "outcome"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sediment_objectstore_request_seconds",
			Help:    "Latency of object store calls, retries included, by backend and operation.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 17), // 0.5 ms .. 33 s
		}, []string{"backend", "op"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sediment_objectstore_bytes_total",
			Help: "Object bytes moved by successful calls: direction in is read from the store (get, get_range), out is written to it (put).",
		}, []string{"backend", "direction"}),
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "sediment_objectstore_requests_in_flight",
			Help: "Object store calls under way.",
		}, []string{"backend"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sediment_objectstore_retries_total",
			Help: "HTTP requests retried by the S3-protocol backends after a transient failure, by backend and request.",
		}, []string{"backend", "op"}),
	}
	var err error
	m.requests = register(reg, m.requests, &err)
	m.seconds = register(reg, m.seconds, &err)
	m.bytes = register(reg, m.bytes, &err)
	m.inflight = register(reg, m.inflight, &err)
	m.retries = register(reg, m.retries, &err)
	return m, err
}

// register registers c with reg and returns it, or the equal collector reg
// already holds. The first failure is kept in *errp.
func register[C prometheus.Collector](reg prometheus.Registerer, c C, errp *error) C {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	if err != nil && *errp == nil {
		*errp = err
	}
	return c
}

// OnRetry returns a callback for a backend's Tuning.OnRetry that counts
// retries under backend.
func (m *Metrics) OnRetry(backend string) func(op string, err error) {
	return func(op string, _ error) {
		m.retries.WithLabelValues(backend, strings.ReplaceAll(op, " ", "_")).Inc()
	}
}
