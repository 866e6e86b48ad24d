package storemetrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/mem"
	"github.com/sediment-io/sediment/storage/objectstore/objectstoretest"
	"github.com/sediment-io/sediment/storage/objectstore/storemetrics"
)

func newMetrics(t *testing.T, reg prometheus.Registerer) *storemetrics.Metrics {
	t.Helper()
	m, err := storemetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestConformance: the wrapper changes nothing a store promises.
func TestConformance(t *testing.T) {
	m := newMetrics(t, prometheus.NewRegistry())
	objectstoretest.Run(t, func(t *testing.T) objectstore.Store {
		s := storemetrics.Wrap(mem.New(), "mem", m)
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestCounts: calls are counted by operation and outcome, bytes by
// direction, and a second registration on the same registry shares the
// collectors.
func TestCounts(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := storemetrics.Wrap(mem.New(), "mem", newMetrics(t, reg))
	other := storemetrics.Wrap(mem.New(), "mem2", newMetrics(t, reg))
	ctx := t.Context()
	s.Put(ctx, "k", make([]byte, 100), objectstore.Condition{})
	s.Put(ctx, "k", nil, objectstore.Condition{IfAbsent: true})
	s.GetRange(ctx, "k", 10, 30)
	s.Get(ctx, "missing")
	other.Put(ctx, "k", make([]byte, 7), objectstore.Condition{})
	for _, c := range []struct {
		metric string
		labels []string
		want   float64
	}{
		{"sediment_objectstore_requests_total", []string{"mem", "put", "ok"}, 1},
		{"sediment_objectstore_requests_total", []string{"mem", "put", "precondition_failed"}, 1},
		{"sediment_objectstore_requests_total", []string{"mem", "get_range", "ok"}, 1},
		{"sediment_objectstore_requests_total", []string{"mem", "get", "not_found"}, 1},
		{"sediment_objectstore_requests_total", []string{"mem2", "put", "ok"}, 1},
		{"sediment_objectstore_bytes_total", []string{"mem", "out"}, 100},
		{"sediment_objectstore_bytes_total", []string{"mem", "in"}, 30},
		{"sediment_objectstore_bytes_total", []string{"mem2", "out"}, 7},
	} {
		if got := value(t, reg, c.metric, c.labels); got != c.want {
			t.Errorf("%s%q = %v, want %v", c.metric, c.labels, got, c.want)
		}
	}
	if n := series(t, reg, "sediment_objectstore_request_seconds"); n != 4 {
		t.Errorf("%d latency series, want 4 (mem put, get_range, get; mem2 put)", n)
	}
}

// series counts metric's label sets.
func series(t *testing.T, reg *prometheus.Registry, metric string) int {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == metric {
			return len(f.GetMetric())
		}
	}
	return 0
}

// value returns the counter of metric whose label values are labels.
func value(t *testing.T, reg *prometheus.Registry, metric string, labels []string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != metric {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			for i, lp := range m.GetLabel() {
				if i >= len(labels) || lp.GetValue() != labels[i] {
					continue next
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}
