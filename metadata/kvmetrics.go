package metadata

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Instrument returns kv with every call counted and timed in reg:
// sediment_metadata_requests_total{op,result} and
// sediment_metadata_request_seconds{op}. With etcd these are the round
// trips and transactions per second the cluster puts on it; bench/ turns
// them into requests per GB produced.
func Instrument(kv KV, reg prometheus.Registerer) KV {
	m := &instrumented{KV: kv,
		reqs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sediment_metadata_requests_total",
			Help: "Metadata KV calls by op (get, range, txn) and result (ok, conflict, uncertain, error)."}, []string{"op", "result"}),
		secs: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "sediment_metadata_request_seconds",
			Help:    "Round-trip time of metadata KV calls by op.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}, []string{"op"}),
	}
	if reg != nil {
		reg.MustRegister(m.reqs, m.secs)
	}
	return m
}

type instrumented struct {
	KV
	reqs *prometheus.CounterVec
	secs *prometheus.HistogramVec
}

func (m *instrumented) observe(op string, start time.Time, err error) {
	m.secs.WithLabelValues(op).Observe(time.Since(start).Seconds())
	result := "ok"
	switch {
	case err == nil:
	case IsConflict(err):
		result = "conflict"
	case IsUncertain(err):
		result = "uncertain"
	default:
		result = "error"
	}
	m.reqs.WithLabelValues(op, result).Inc()
}

func (m *instrumented) Get(ctx context.Context, key string) (Item, bool, error) {
	start := time.Now()
	it, ok, err := m.KV.Get(ctx, key)
	m.observe("get", start, err)
	return it, ok, err
}

func (m *instrumented) Range(ctx context.Context, start, end string, limit int, reverse bool) ([]Item, error) {
	t := time.Now()
	items, err := m.KV.Range(ctx, start, end, limit, reverse)
	m.observe("range", t, err)
	return items, err
}

func (m *instrumented) Txn(ctx context.Context, conds []Cond, ops []Op) (int64, error) {
	start := time.Now()
	rev, err := m.KV.Txn(ctx, conds, ops)
	m.observe("txn", start, err)
	return rev, err
}

// Unwrap returns the instrumented backend.
func (m *instrumented) Unwrap() KV { return m.KV }
