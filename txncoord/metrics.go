package txncoord

import "github.com/prometheus/client_golang/prometheus"

// metrics are the coordinator's Prometheus collectors. Open transactions
// are counted on every scrape.
type metrics struct {
	commits  prometheus.Counter
	aborts   prometheus.Counter
	timedOut prometheus.Counter
	open     *prometheus.Desc
	shards   *prometheus.Desc
	c        *Coordinator
}

func newMetrics(c *Coordinator) *metrics {
	return &metrics{
		c: c,
		commits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_txn_commits_total", Help: "Transactions committed (markers durable, CompleteCommit stored)."}),
		aborts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_txn_aborts_total", Help: "Transactions aborted (markers durable, CompleteAbort stored), timed-out and fenced ones included."}),
		timedOut: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_txn_timed_out_aborts_total", Help: "Transactions fenced and aborted by the timeout sweep (transaction.timeout.ms)."}),
		open: prometheus.NewDesc("sediment_txn_open_transactions",
			"Transactions open on the shards served here (Ongoing, or their markers being written).", nil, nil),
		shards: prometheus.NewDesc("sediment_txn_coordinator_shards",
			"Transaction coordinator shards this broker serves (all of them on one node).", nil, nil),
	}
}

// register registers the collectors with reg (nil: not registered).
func (m *metrics) register(reg prometheus.Registerer) {
	if reg != nil {
		reg.MustRegister(m.commits, m.aborts, m.timedOut, m)
	}
}

// completed counts a completed transaction.
func (m *metrics) completed(commit bool) {
	if commit {
		m.commits.Inc()
	} else {
		m.aborts.Inc()
	}
}

// Describe implements prometheus.Collector for the gauges read on scrape.
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.open
	ch <- m.shards
}

// Collect implements prometheus.Collector.
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	shards := m.c.ownedShards()
	open := 0
	for _, sh := range shards {
		for _, t := range sh.snapshot() {
			t.mu.Lock()
			if t.exists() && (t.rec.state == Ongoing || t.rec.state.inFlight()) {
				open++
			}
			t.mu.Unlock()
		}
	}
	ch <- prometheus.MustNewConstMetric(m.open, prometheus.GaugeValue, float64(open))
	ch <- prometheus.MustNewConstMetric(m.shards, prometheus.GaugeValue, float64(len(shards)))
}
