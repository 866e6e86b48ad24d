package table

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment-io/sediment/storage/partition"
)

// tableStats is what a worker reports about its table; written by the
// worker, read by Status and the metrics collector.
type tableStats struct {
	lag        atomic.Int64 // offsets below the high watermarks not yet in the table
	progress   atomic.Int64 // sum over partitions of the next offset in the current snapshot
	lastCommit atomic.Int64 // unix ms of the last snapshot; 0: none
	rows       atomic.Int64 // rows committed by this broker since start
	files      atomic.Int64 // data files committed by this broker since start
	commits    atomic.Int64
	retries    atomic.Int64 // commits retried after a conflict or an unknown outcome
	dlq        atomic.Int64 // records sent to the dead-letter topic
	skipped    atomic.Int64 // records skipped (errors=skip)
	lost       atomic.Int64 // records deleted by retention before conversion
	orphans    atomic.Int64 // orphan files deleted

	mu    sync.Mutex // guards state and err
	state string     // starting | running | error | stopped
	err   string
}

func (s *tableStats) setState(state, err string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state, s.err = state, err
}

func (s *tableStats) committed(rows, files int64, at time.Time) {
	s.rows.Add(rows)
	s.files.Add(files)
	s.commits.Add(1)
	s.lastCommit.Store(at.UnixMilli())
}

func (w *worker) updateLag(parts []*partition.Partition) {
	var lag int64
	for _, p := range parts {
		_, hw := p.Offsets()
		if n := hw - w.next[p.Index()]; n > 0 && w.next[p.Index()] >= 0 {
			lag += n
		}
	}
	w.stats.lag.Store(lag)
}

func (s *tableStats) setProgress(next map[int32]int64) {
	var sum int64
	for _, off := range next {
		sum += off
	}
	s.progress.Store(sum)
}

func (c *Converter) statsFor(name string) *tableStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.stats[name]
	if !ok {
		s = &tableStats{state: "starting"}
		c.stats[name] = s
	}
	return s
}

// Status is a table topic's conversion status.
type Status struct {
	State      string // starting | running | error | stopped
	Error      string // the last failure, when State is error or stopped
	Lag        int64  // offsets not yet in the table
	LastCommit time.Time
	Rows       int64 // rows committed since the broker started
	Files      int64 // data files committed since the broker started
	DLQ        int64 // records dead-lettered since the broker started
	Skipped    int64
	Retries    int64 // commits retried after a conflict or an unknown outcome
	Committed  int64 // sum over partitions of the next offset in the current snapshot
	Commits    int64 // snapshots committed since the broker started
}

// Status returns the status of topic's table, if it is a table topic this
// converter has seen.
func (c *Converter) Status(topic string) (Status, bool) {
	c.mu.Lock()
	s, ok := c.stats[topic]
	c.mu.Unlock()
	if !ok {
		return Status{}, false
	}
	s.mu.Lock()
	st := Status{State: s.state, Error: s.err}
	s.mu.Unlock()
	st.Lag, st.Rows, st.Files, st.DLQ, st.Skipped = s.lag.Load(), s.rows.Load(), s.files.Load(), s.dlq.Load(), s.skipped.Load()
	st.Retries, st.Committed, st.Commits = s.retries.Load(), s.progress.Load(), s.commits.Load()
	if ms := s.lastCommit.Load(); ms > 0 {
		st.LastCommit = time.UnixMilli(ms).UTC()
	}
	return st, true
}

// StatusPrefix starts the names of a table topic's read-only status
// entries.
const StatusPrefix = "sediment.table.status."

// StatusNames are the names of the entries StatusEntries returns, in its
// order.
var StatusNames = []string{StatusPrefix + "lag", StatusPrefix + "last-commit", StatusPrefix + "rows",
	StatusPrefix + "files", StatusPrefix + "dlq", StatusPrefix + "state"}

// StatusEntries returns the status as the read-only DescribeConfigs
// entries StatusNames (name, value) in that order.
func (c *Converter) StatusEntries(topic string) [][2]string {
	st, ok := c.Status(topic)
	if !ok {
		return nil
	}
	last := ""
	if !st.LastCommit.IsZero() {
		last = st.LastCommit.Format(time.RFC3339Nano)
	}
	state := st.State
	if st.Error != "" {
		state += ": " + st.Error
	}
	values := []string{strconv.FormatInt(st.Lag, 10), last, strconv.FormatInt(st.Rows, 10),
		strconv.FormatInt(st.Files, 10), strconv.FormatInt(st.DLQ, 10), state}
	out := make([][2]string, len(StatusNames))
	for i, name := range StatusNames {
		out[i] = [2]string{name, values[i]}
	}
	return out
}

// metrics exports every table's stats as Prometheus metrics, labelled by
// table, read at scrape time.
type metrics struct {
	c     *Converter
	descs []*prometheus.Desc // in the order of tableMetrics
}

// tableMetric is one exported per-table metric.
type tableMetric struct {
	name, help string
	typ        prometheus.ValueType
	value      func(*tableStats) float64
}

var tableMetrics = []tableMetric{
	{"sediment_table_lag_offsets", "offsets below the high watermarks not yet committed to the table",
		prometheus.GaugeValue, func(s *tableStats) float64 { return float64(s.lag.Load()) }},
	{"sediment_table_committed_offsets", "sum over partitions of the next offset recorded in the table's current snapshot",
		prometheus.GaugeValue, func(s *tableStats) float64 { return float64(s.progress.Load()) }},
	{"sediment_table_last_commit_timestamp", "unix time of the table's last snapshot",
		prometheus.GaugeValue, func(s *tableStats) float64 { return float64(s.lastCommit.Load()) / 1000 }},
	{"sediment_table_rows_total", "rows committed to the table by this broker",
		prometheus.CounterValue, func(s *tableStats) float64 { return float64(s.rows.Load()) }},
	{"sediment_table_files_total", "data files committed to the table by this broker",
		prometheus.CounterValue, func(s *tableStats) float64 { return float64(s.files.Load()) }},
	{"sediment_table_commits_total", "snapshots committed by this broker",
		prometheus.CounterValue, func(s *tableStats) float64 { return float64(s.commits.Load()) }},
	{"sediment_table_commit_retries_total", "commits retried on fresh metadata after a conflict or an unknown outcome",
		prometheus.CounterValue, func(s *tableStats) float64 { return float64(s.retries.Load()) }},
	{"sediment_table_dlq_records_total", "records sent to the dead-letter topic",
		prometheus.CounterValue, func(s *tableStats) float64 { return float64(s.dlq.Load()) }},
	{"sediment_table_skipped_records_total", "records skipped (sediment.table.errors=skip)",
		prometheus.CounterValue, func(s *tableStats) float64 { return float64(s.skipped.Load()) }},
	{"sediment_table_retention_lost_total", "records deleted by retention before they were converted",
		prometheus.CounterValue, func(s *tableStats) float64 { return float64(s.lost.Load()) }},
	{"sediment_table_orphan_files_deleted_total", "unreferenced files deleted when the converter started",
		prometheus.CounterValue, func(s *tableStats) float64 { return float64(s.orphans.Load()) }},
}

func newMetrics(c *Converter, reg prometheus.Registerer) *metrics {
	m := &metrics{c: c}
	for _, tm := range tableMetrics {
		m.descs = append(m.descs, prometheus.NewDesc(tm.name, tm.help, []string{"table"}, nil))
	}
	if reg != nil {
		reg.MustRegister(m)
	}
	return m
}

// Describe implements prometheus.Collector.
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range m.descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	m.c.mu.Lock()
	stats := make(map[string]*tableStats, len(m.c.stats))
	for k, v := range m.c.stats {
		stats[k] = v
	}
	m.c.mu.Unlock()
	for name, s := range stats {
		for i, tm := range tableMetrics {
			ch <- prometheus.MustNewConstMetric(m.descs[i], tm.typ, tm.value(s), name)
		}
	}
}
