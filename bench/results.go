package bench

import (
	"strings"
	"time"
)

// ResultsSchema is the version of results.json's layout.
const ResultsSchema = 1

// Results is everything a run measured: DIR/results.json.
type Results struct {
	Schema   int            `json:"schema"`
	Started  time.Time      `json:"started"`
	Command  []string       `json:"command,omitempty"`
	Machine  Machine        `json:"machine"`
	Loopback Loopback       `json:"loopback"`
	Workload *Workload      `json:"workload"`
	Rounds   int            `json:"rounds"`
	Targets  []TargetResult `json:"targets"`
	// Ratios, with two or more targets (--vs), are the second target's
	// figures over the first's (every target's are in its VsFirst).
	Ratios map[string]float64 `json:"ratios,omitempty"`
	Prices PriceTable         `json:"prices"`
	Notes  []string           `json:"notes,omitempty"`
}

// TargetResult is one target's figures over all its rounds.
type TargetResult struct {
	Target   string `json:"target"`
	Kind     string `json:"kind"`
	Produced int64  `json:"records_produced"` // acknowledged
	Consumed int64  `json:"records_consumed"`
	// Complete is true when every acknowledged record was consumed and
	// no round failed.
	Complete   bool          `json:"complete"`
	Produce    Rate          `json:"produce"`
	Consume    Rate          `json:"consume"`
	ProduceAck Latency       `json:"produce_ack_latency"`
	EndToEnd   Latency       `json:"end_to_end_latency"`
	Broker     *BrokerFigure `json:"broker,omitempty"`
	Cost       *CostEstimate `json:"cost,omitempty"`
	// Cluster, for a launched cluster, is its per-broker and etcd figures
	// (Broker is then the sum over its brokers).
	Cluster *ClusterFigure `json:"cluster,omitempty"`
	// Transactions, for a transactional workload, is its commits, the
	// read_uncommitted consumers' latency and the idempotent leg; the
	// figures above are then the committed records' and the
	// read_committed consumers'.
	Transactions *TxnFigure `json:"transactions,omitempty"`
	Timeline     []Point    `json:"timeline"`
	// VsFirst, for every target after the first, is its headline figures
	// over the first target's.
	VsFirst map[string]float64 `json:"vs_first,omitempty"`
	Notes   []string           `json:"notes,omitempty"`
	Errors  []string           `json:"errors,omitempty"`
}

// Rate is a throughput over a measured time.
type Rate struct {
	Records       int64   `json:"records"`
	Bytes         int64   `json:"bytes"`
	Seconds       float64 `json:"seconds"`
	RecordsPerSec float64 `json:"records_per_s"`
	MBPerSec      float64 `json:"mb_per_s"` // 10^6 value bytes per second
	// PctOfLoopback is MBPerSec over the machine's raw loopback TCP
	// throughput measured at the start of the run.
	PctOfLoopback float64 `json:"pct_of_loopback"`
}

// BrokerFigure is what the broker's own metrics said about the run.
type BrokerFigure struct {
	// ProcOnly is true for a broker without a Prometheus endpoint (a
	// launched Apache Kafka): only the CPU and peak RSS, read from /proc,
	// are measured and the other figures are absent, not zero.
	ProcOnly         bool               `json:"proc_only,omitempty"`
	CPUSeconds       float64            `json:"cpu_seconds"`
	CPUSecondsPerGB  float64            `json:"cpu_seconds_per_gb"` // per 10^9 value bytes produced
	PeakRSSBytes     float64            `json:"peak_rss_bytes"`
	FsyncsPerSec     float64            `json:"fsyncs_per_s"`
	Puts             float64            `json:"object_puts"`
	Gets             float64            `json:"object_gets"`
	PutsPerGB        float64            `json:"object_puts_per_gb"` // per 10^9 value bytes produced
	GetsPerGB        float64            `json:"object_gets_per_gb"` // per 10^9 value bytes consumed
	ObjectBytesOut   float64            `json:"object_bytes_out"`
	ObjectBytesIn    float64            `json:"object_bytes_in"`
	WallSeconds      float64            `json:"wall_seconds"`
	TableMetricsLast map[string]float64 `json:"table_metrics,omitempty"` // sediment_table_* at the end
	// FetchReads counts the partition reads that served fetches, by
	// where the data came from (memory, wal, object): whether consumers
	// read from the tail or from the bucket.
	FetchReads map[string]float64 `json:"fetch_reads_by_source,omitempty"`
	// TableLag is the sum of the sediment_table_*lag* samples at the end
	// of the last round: how far the tables trail the topics.
	TableLag float64 `json:"table_lag,omitempty"`
}

// mergeRounds adds up one target's rounds.
func mergeRounds(spec TargetSpec, rounds []*roundResult, loopbackMBps float64) TargetResult {
	tr := TargetResult{Target: spec.Label(), Kind: spec.Kind, Complete: true}
	ack, e2e := newHistogram(), newHistogram()
	var b brokerSums
	var cs clusterSums
	offset := 0.0
	for _, r := range rounds {
		ack.Merge(r.ack)
		e2e.Merge(r.e2e)
		tr.Produced += r.produced
		tr.Consumed += r.consumed
		tr.Produce.add(r.steady, r.steadyBytes, r.produceSeconds)
		tr.Consume.add(r.consumed, r.consumedBytes, r.consumeSeconds)
		for _, p := range r.timeline {
			p.Seconds += offset
			tr.Timeline = append(tr.Timeline, p)
		}
		offset += r.wallSeconds
		tr.Notes = appendNew(tr.Notes, r.notes...)
		if r.err != nil {
			tr.Errors = append(tr.Errors, r.err.Error())
			tr.Complete = false
		}
		b.add(r)
		cs.add(r)
	}
	if tr.Consumed != tr.Produced {
		tr.Complete = false
	}
	tr.Produce.finish(loopbackMBps)
	tr.Consume.finish(loopbackMBps)
	tr.ProduceAck, tr.EndToEnd = summarize(ack), summarize(e2e)
	if b.rounds > 0 {
		tr.Broker = b.figure(tr)
		tr.Cost = estimateCost(tr.Broker, tr.Produced, tr.Consumed, tr.Produce, tr.Consume)
	}
	tr.Cluster = cs.figure(producedGB(tr), uploadInterval(spec.Cluster.Sediment.Flags))
	tr.Transactions = mergeTxn(spec, rounds, loopbackMBps, &tr)
	return tr
}

func (r *Rate) add(records, bytes int64, seconds float64) {
	r.Records += records
	r.Bytes += bytes
	r.Seconds += seconds
}

func (r *Rate) finish(loopbackMBps float64) {
	if r.Seconds <= 0 {
		return
	}
	r.RecordsPerSec = float64(r.Records) / r.Seconds
	r.MBPerSec = float64(r.Bytes) / r.Seconds / 1e6
	if loopbackMBps > 0 {
		r.PctOfLoopback = 100 * r.MBPerSec / loopbackMBps
	}
}

// brokerSums adds the metric deltas of rounds that had metrics.
type brokerSums struct {
	rounds                  int
	cpu, fsyncs, puts, gets float64
	bytesOut, bytesIn, wall float64
	peak                    float64
	procOnly                bool
	table                   map[string]float64
	fetchReads              map[string]float64
}

func (b *brokerSums) add(r *roundResult) {
	if !r.hasMetrics {
		return
	}
	b.rounds++
	b.cpu += r.after.CPUSeconds - r.before.CPUSeconds
	b.fsyncs += r.after.Fsyncs - r.before.Fsyncs
	b.puts += r.after.Puts - r.before.Puts
	b.gets += r.after.Gets - r.before.Gets
	b.bytesOut += r.after.ObjBytesOut - r.before.ObjBytesOut
	b.bytesIn += r.after.ObjBytesIn - r.before.ObjBytesIn
	b.wall += r.wallSeconds
	b.peak = max(b.peak, r.after.PeakRSS, r.after.RSSBytes, r.before.RSSBytes)
	b.procOnly = r.after.ProcOnly
	if len(r.after.Table) > 0 {
		b.table = r.after.Table
	}
	for src, n := range r.after.FetchReads {
		if b.fetchReads == nil {
			b.fetchReads = map[string]float64{}
		}
		b.fetchReads[src] += n - r.before.FetchReads[src]
	}
}

func (b *brokerSums) figure(tr TargetResult) *BrokerFigure {
	f := &BrokerFigure{ProcOnly: b.procOnly, CPUSeconds: b.cpu, PeakRSSBytes: b.peak, Puts: b.puts, Gets: b.gets,
		ObjectBytesOut: b.bytesOut, ObjectBytesIn: b.bytesIn, WallSeconds: b.wall, TableMetricsLast: b.table}
	f.TableLag = tableLag(b.table)
	f.FetchReads = b.fetchReads
	producedGB := producedGB(tr)
	consumedGB := float64(tr.Consume.Bytes) / 1e9
	if producedGB > 0 {
		f.CPUSecondsPerGB = b.cpu / producedGB
		f.PutsPerGB = b.puts / producedGB
	}
	if consumedGB > 0 {
		f.GetsPerGB = b.gets / consumedGB
	}
	if b.wall > 0 {
		f.FsyncsPerSec = b.fsyncs / b.wall
	}
	return f
}

// producedGB is the target's produce in 10^9 value bytes, warmup included.
func producedGB(tr TargetResult) float64 {
	if all := float64(totalBytes(tr.Produce, tr.Produced)) / 1e9; all > 0 {
		return all
	}
	return float64(tr.Produce.Bytes) / 1e9
}

// totalBytes estimates all produced value bytes (warmup included) from the
// steady figures: request counts cover the whole round.
func totalBytes(steady Rate, produced int64) int64 {
	if steady.Records == 0 {
		return 0
	}
	return steady.Bytes * produced / steady.Records
}

// appendNew appends the strings not already in list.
func appendNew(list []string, more ...string) []string {
	for _, s := range more {
		found := false
		for _, l := range list {
			found = found || l == s
		}
		if !found {
			list = append(list, s)
		}
	}
	return list
}

// tableLag adds the samples of the table metrics named *lag*.
func tableLag(table map[string]float64) float64 {
	var lag float64
	for name, v := range table {
		if strings.Contains(strings.SplitN(name, "{", 2)[0], "lag") {
			lag += v
		}
	}
	return lag
}
