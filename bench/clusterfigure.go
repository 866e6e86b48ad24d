package bench

import (
	"strings"
	"time"
)

// hourIntervals is an hour of uploads at the default --upload-interval
// of 250 ms.
const hourIntervals = 14400

// objectPartitions is how many partitions one data object holds at most
// with etcd metadata (the broker's bound, so that an object's commit fits
// etcd's 128 operations per transaction): an upload round of a broker
// owning P partitions, each written, is ⌈P/32⌉ objects.
const objectPartitions = 32

// ClusterFigure is what a cluster's brokers and its etcd said about the
// run: the load the cluster puts on etcd, per broker and in total.
type ClusterFigure struct {
	Brokers []ClusterBrokerFigure `json:"brokers"`
	// EtcdTxns are the brokers' metadata transactions
	// (sediment_metadata_requests_total{op="txn"}), per second of the
	// rounds and per 10^9 value bytes produced.
	EtcdTxns       float64 `json:"etcd_txns"`
	EtcdTxnsPerSec float64 `json:"etcd_txns_per_s"`
	EtcdTxnsPerGB  float64 `json:"etcd_txns_per_gb"`
	// NoTxnMetric is true when no broker exported
	// sediment_metadata_requests_total: the txn figures are absent, not 0.
	NoTxnMetric bool `json:"no_txn_metric,omitempty"`
	// EtcdServerTxns is etcd's own count of transactions
	// (etcd_mvcc_txn_total), from every client.
	EtcdServerTxns float64 `json:"etcd_server_txns"`
	// EtcdReceivedBytes is what etcd received from its clients over gRPC
	// (etcd_network_client_grpc_received_bytes_total), also per GB.
	EtcdReceivedBytes float64 `json:"etcd_received_bytes"`
	EtcdReceivedPerGB float64 `json:"etcd_received_bytes_per_gb"`
	EtcdSentBytes     float64 `json:"etcd_sent_bytes"`
	// EtcdDBSize and EtcdDBInUse are the database file and its part in
	// use at the end of the last round, as the brokers' own maintenance
	// left them (before the bench compacts).
	EtcdDBSize  float64 `json:"etcd_db_size_bytes"`
	EtcdDBInUse float64 `json:"etcd_db_in_use_bytes"`
	// Compaction is the bench's own compaction and defragmentation of
	// etcd after the last round's measurement.
	Compaction *EtcdCompaction `json:"compaction,omitempty"`
	// UploadIntervalSeconds is the brokers' --upload-interval; the rounds
	// lasted UploadIntervals of them. A broker that cannot keep up cuts
	// fewer: UploadRounds is the mean over the brokers of the rounds their
	// objects stand for (ClusterBrokerFigure.UploadRounds), and
	// HourEquivalents those in hours of uploads at the default 250 ms.
	UploadIntervalSeconds float64         `json:"upload_interval_s"`
	UploadIntervals       float64         `json:"upload_intervals"`
	UploadRounds          float64         `json:"upload_rounds"`
	HourEquivalents       float64         `json:"hour_equivalents"`
	Failover              *FailoverFigure `json:"failover,omitempty"`
}

// ClusterBrokerFigure is one broker's share.
type ClusterBrokerFigure struct {
	Node           int     `json:"node_id"`
	Rack           string  `json:"rack"`
	Killed         bool    `json:"killed,omitempty"`
	EtcdTxns       float64 `json:"etcd_txns"`
	EtcdTxnsPerSec float64 `json:"etcd_txns_per_s"`
	// EtcdTxnsPerGB is per 10^9 value bytes produced to the whole cluster;
	// EtcdTxnsPerOwnGB per 10^9 bytes appended on this broker.
	EtcdTxnsPerGB    float64 `json:"etcd_txns_per_gb"`
	AppendedBytes    float64 `json:"appended_bytes"`
	EtcdTxnsPerOwnGB float64 `json:"etcd_txns_per_own_gb"`
	Objects          float64 `json:"objects"`
	CPUSeconds       float64 `json:"cpu_seconds"`
	// Partitions is how many of the last round's partitions the broker
	// owned at its end (own/ keys); UploadRounds is Objects over
	// ⌈Partitions/32⌉: its upload rounds if every partition was written
	// in each.
	Partitions   int     `json:"partitions_owned"`
	UploadRounds float64 `json:"upload_rounds"`
}

// EtcdCompaction is etcd's database before and after the bench compacted
// its history to the current revision and defragmented it: the floor the
// live keys need, whatever the brokers' maintenance interval.
type EtcdCompaction struct {
	Revision      int64   `json:"revision"`
	DBSizeBefore  float64 `json:"db_size_before"`
	DBInUseBefore float64 `json:"db_in_use_before"`
	DBSizeAfter   float64 `json:"db_size_after"`
	DBInUseAfter  float64 `json:"db_in_use_after"`
	// Keys are the keys under the cluster's prefix; KeysPerPartition
	// divides them by the round's partitions.
	Keys             int64   `json:"keys"`
	KeysPerPartition float64 `json:"keys_per_partition"`
	Seconds          float64 `json:"seconds"`
}

// clusterSums adds the cluster deltas of a target's rounds.
type clusterSums struct {
	rounds     int
	wall       float64
	brokers    []ClusterBrokerFigure // by position in the snapshots
	txns       float64
	hasMeta    bool
	etcd       EtcdSnapshot // deltas of the counters
	last       EtcdSnapshot // the gauges at the end of the last round
	compaction *EtcdCompaction
	failover   *FailoverFigure
}

func (c *clusterSums) add(r *roundResult) {
	before, after := r.before.Cluster, r.after.Cluster
	if !r.hasMetrics || before == nil || after == nil || len(before.Brokers) != len(after.Brokers) {
		return
	}
	c.rounds++
	c.wall += r.wallSeconds
	if c.brokers == nil {
		c.brokers = make([]ClusterBrokerFigure, len(after.Brokers))
	}
	for i, a := range after.Brokers {
		b := before.Brokers[i].Snapshot
		f := &c.brokers[i]
		f.Node, f.Rack, f.Killed = a.Node, a.Rack, f.Killed || a.Killed
		f.EtcdTxns += a.MetaTxns - b.MetaTxns
		f.AppendedBytes += a.Appended - b.Appended
		f.Objects += a.Objects - b.Objects
		f.CPUSeconds += a.CPUSeconds - b.CPUSeconds
		c.txns += a.MetaTxns - b.MetaTxns
		c.hasMeta = c.hasMeta || a.HasMeta
	}
	e, eb := after.Etcd, before.Etcd
	c.etcd.ReceivedBytes += e.ReceivedBytes - eb.ReceivedBytes
	c.etcd.SentBytes += e.SentBytes - eb.SentBytes
	c.etcd.Txns += e.Txns - eb.Txns
	c.last = e
	if r.compaction != nil {
		c.compaction = r.compaction
	}
	if r.failover != nil {
		c.failover = r.failover
	}
	for i := range c.brokers {
		c.brokers[i].Partitions = r.owned[int32(c.brokers[i].Node)]
	}
}

// figure turns the sums into rates; producedGB is the cluster's produce
// in 10^9 value bytes, interval the brokers' --upload-interval.
func (c *clusterSums) figure(producedGB float64, interval time.Duration) *ClusterFigure {
	if c.rounds == 0 {
		return nil
	}
	f := &ClusterFigure{Brokers: c.brokers, EtcdTxns: c.txns, NoTxnMetric: !c.hasMeta,
		EtcdServerTxns: c.etcd.Txns, EtcdReceivedBytes: c.etcd.ReceivedBytes, EtcdSentBytes: c.etcd.SentBytes,
		EtcdDBSize: c.last.DBSize, EtcdDBInUse: c.last.DBInUse, Compaction: c.compaction, Failover: c.failover,
		UploadIntervalSeconds: interval.Seconds()}
	f.EtcdTxnsPerSec = perUnit(c.txns, c.wall)
	f.EtcdTxnsPerGB = perUnit(c.txns, producedGB)
	f.EtcdReceivedPerGB = perUnit(c.etcd.ReceivedBytes, producedGB)
	for i := range f.Brokers {
		b := &f.Brokers[i]
		b.EtcdTxnsPerSec = perUnit(b.EtcdTxns, c.wall)
		b.EtcdTxnsPerGB = perUnit(b.EtcdTxns, producedGB)
		b.EtcdTxnsPerOwnGB = perUnit(b.EtcdTxns, b.AppendedBytes/1e9)
	}
	if interval > 0 {
		f.UploadIntervals = c.wall / interval.Seconds()
	}
	owners := 0
	for i := range f.Brokers {
		b := &f.Brokers[i]
		if b.Partitions > 0 {
			b.UploadRounds = b.Objects / float64((b.Partitions+objectPartitions-1)/objectPartitions)
			f.UploadRounds += b.UploadRounds
			owners++
		}
	}
	f.UploadRounds = perUnit(f.UploadRounds, float64(owners))
	f.HourEquivalents = f.UploadRounds / hourIntervals
	return f
}

// perUnit is x/per, 0 when per is not positive.
func perUnit(x, per float64) float64 {
	if per <= 0 {
		return 0
	}
	return x / per
}

// uploadInterval reads --upload-interval from `broker serve` flags (the
// last one given wins, as in the flag package); default 250 ms.
func uploadInterval(flags []string) time.Duration {
	d := 250 * time.Millisecond
	for i, f := range flags {
		name, val, hasVal := strings.Cut(strings.TrimLeft(f, "-"), "=")
		if name != "upload-interval" || !strings.HasPrefix(f, "-") {
			continue
		}
		if !hasVal {
			if i+1 >= len(flags) {
				continue
			}
			val = flags[i+1]
		}
		if v, err := time.ParseDuration(val); err == nil {
			d = v
		}
	}
	return d
}
