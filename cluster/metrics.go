package cluster

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	reg          prometheus.Registerer
	collectors   []prometheus.Collector
	sessionsLost prometheus.Counter
}

func newMetrics(n *Node, reg prometheus.Registerer) (*metrics, error) {
	bool01 := func(f func() bool) func() float64 {
		return func() float64 {
			if f() {
				return 1
			}
			return 0
		}
	}
	m := &metrics{reg: reg, sessionsLost: prometheus.NewCounter(prometheus.CounterOpts{
		Name: "sediment_cluster_sessions_lost_total",
		Help: "Sessions this broker lost (local deadline passed or lease gone), each followed by dropping everything it owned.",
	})}
	m.collectors = []prometheus.Collector{m.sessionsLost,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sediment_cluster_session_valid",
			Help: "1 while the broker is inside its session's local deadline and may act as an owner."}, bool01(n.Valid)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sediment_cluster_controller",
			Help: "1 while this broker is the elected controller."}, bool01(n.Sweeps)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sediment_cluster_owned_partitions",
			Help: "Partitions this broker owns."}, func() float64 { return float64(n.ownedCount(false)) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sediment_cluster_owned_shards",
			Help: "Group-coordinator shards this broker owns."}, func() float64 { return float64(n.ownedCount(true)) }),
	}
	if reg == nil {
		return m, nil
	}
	var errs []error
	for _, c := range m.collectors {
		if err := reg.Register(c); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		m.unregister()
		return nil, fmt.Errorf("cluster: metrics: %w", err)
	}
	return m, nil
}

func (m *metrics) unregister() {
	if m.reg == nil {
		return
	}
	for _, c := range m.collectors {
		m.reg.Unregister(c)
	}
}

func (n *Node) ownedCount(shards bool) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := 0
	for sl := range n.held {
		if sl.shard == shards && !sl.table {
			c++
		}
	}
	return c
}
