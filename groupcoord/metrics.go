package groupcoord

import "github.com/prometheus/client_golang/prometheus"

// metrics are the coordinator's Prometheus collectors. Groups by state and
// members are read from the groups on every scrape.
type metrics struct {
	rebalances    prometheus.Counter
	removals      *prometheus.CounterVec // reason
	commits       prometheus.Counter
	commitReqs    prometheus.Counter
	persistTxns   prometheus.Counter
	txnsCompleted *prometheus.CounterVec // result
	groupsByState *prometheus.Desc
	txnOffsets    *prometheus.Desc
	members       *prometheus.Desc
	shards        *prometheus.Desc
	c             *Coordinator
}

func newMetrics(c *Coordinator) *metrics {
	m := &metrics{
		c: c,
		rebalances: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_group_rebalances_total", Help: "Rebalances started, over all groups."}),
		removals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sediment_group_member_removals_total", Help: "Members removed from groups, by reason."}, []string{"reason"}),
		commits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_group_offset_commits_total", Help: "Partition offsets committed (durable)."}),
		commitReqs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_group_offset_commit_requests_total", Help: "OffsetCommit requests that stored at least one offset."}),
		persistTxns: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_group_metadata_txns_total", Help: "Metadata transactions of the group persister (each holds many changes)."}),
		txnsCompleted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sediment_group_txn_completions_total",
			Help: "Transactions whose pending offsets in a group were committed or aborted, by result."}, []string{"result"}),
		groupsByState: prometheus.NewDesc("sediment_groups", "Consumer groups, by state.", []string{"state"}, nil),
		txnOffsets: prometheus.NewDesc("sediment_group_pending_txn_offsets",
			"Offsets committed inside transactions not completed yet, over all groups.", nil, nil),
		members: prometheus.NewDesc("sediment_group_members", "Members of all consumer groups.", nil, nil),
		shards: prometheus.NewDesc("sediment_group_coordinator_shards",
			"Coordinator shards this broker serves (all of them on one node).", nil, nil),
	}
	return m
}

// register registers the collectors with reg (nil: not registered).
func (m *metrics) register(reg prometheus.Registerer) {
	if reg != nil {
		reg.MustRegister(m.rebalances, m.removals, m.commits, m.commitReqs, m.persistTxns, m.txnsCompleted, m)
	}
}

// Describe implements prometheus.Collector for the gauges read on scrape.
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.groupsByState
	ch <- m.members
	ch <- m.shards
	ch <- m.txnOffsets
}

// Collect implements prometheus.Collector.
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	byState := map[State]int{}
	members, pending := 0, 0
	for _, g := range m.c.allGroups() {
		g.mu.Lock()
		byState[g.state]++
		members += len(g.members)
		for _, byTP := range g.txnOffsets {
			pending += len(byTP)
		}
		g.mu.Unlock()
	}
	for s := StateEmpty; s <= StateDead; s++ {
		ch <- prometheus.MustNewConstMetric(m.groupsByState, prometheus.GaugeValue, float64(byState[s]), s.String())
	}
	ch <- prometheus.MustNewConstMetric(m.members, prometheus.GaugeValue, float64(members))
	ch <- prometheus.MustNewConstMetric(m.shards, prometheus.GaugeValue, float64(m.c.ownedShards()))
	ch <- prometheus.MustNewConstMetric(m.txnOffsets, prometheus.GaugeValue, float64(pending))
}
