package bench

import (
	"fmt"
	"strings"
	"testing"
)

// brokerMetrics is a broker's /metrics text with the figures the cluster
// report reads.
func brokerMetrics(txns, appended, objects, cpu float64) string {
	return fmt.Sprintf(`# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total %g
# TYPE sediment_metadata_requests_total counter
sediment_metadata_requests_total{op="txn",result="ok"} %g
sediment_metadata_requests_total{op="txn",result="conflict"} 1
sediment_metadata_requests_total{op="get",result="ok"} 1000
# TYPE sediment_log_appended_bytes_total counter
sediment_log_appended_bytes_total %g
# TYPE sediment_upload_seconds histogram
sediment_upload_seconds_bucket{le="0.1"} %g
sediment_upload_seconds_bucket{le="+Inf"} %g
sediment_upload_seconds_sum 1
sediment_upload_seconds_count %g
`, cpu, txns-1, appended, objects, objects, objects)
}

// etcdMetrics is etcd's /metrics text with the figures the report reads.
func etcdMetrics(received, txns, size, inUse float64) string {
	return fmt.Sprintf(`# TYPE etcd_network_client_grpc_received_bytes_total counter
etcd_network_client_grpc_received_bytes_total %g
# TYPE etcd_network_client_grpc_sent_bytes_total counter
etcd_network_client_grpc_sent_bytes_total 10
# TYPE etcd_mvcc_db_total_size_in_bytes gauge
etcd_mvcc_db_total_size_in_bytes %g
# TYPE etcd_mvcc_db_total_size_in_use_in_bytes gauge
etcd_mvcc_db_total_size_in_use_in_bytes %g
# TYPE etcd_mvcc_txn_total counter
etcd_mvcc_txn_total %g
`, received, size, inUse, txns)
}

func clusterSnapshot(t *testing.T, etcd string, killed int, brokers ...string) Snapshot {
	t.Helper()
	cs := &ClusterSnapshot{}
	for i, text := range brokers {
		s, err := parseMetrics(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		cs.Brokers = append(cs.Brokers, BrokerSnapshot{Node: i, Rack: fmt.Sprintf("r%d", i), Killed: i == killed, Snapshot: s})
	}
	e, err := parseEtcdMetrics(strings.NewReader(etcd))
	if err != nil {
		t.Fatal(err)
	}
	cs.Etcd = e
	return cs.total()
}

// TestClusterFigures: the per-broker and etcd figures of two rounds on a
// cluster of two brokers, from canned metrics: deltas per round, rates
// over the rounds' seconds, per GB of the cluster's and the broker's
// produce, etcd's end gauges, and the report's lines.
func TestClusterFigures(t *testing.T) {
	r1 := &roundResult{ack: newHistogram(), e2e: newHistogram(), hasMetrics: true, wallSeconds: 10, produced: 1000, producedBytes: 1e9, steady: 1000, steadyBytes: 1e9,
		produceSeconds: 10, consumed: 1000, consumedBytes: 1e9, consumeSeconds: 10,
		before: clusterSnapshot(t, etcdMetrics(0, 0, 1e6, 5e5), -1, brokerMetrics(1, 0, 0, 0), brokerMetrics(1, 0, 0, 0)),
		after:  clusterSnapshot(t, etcdMetrics(2e6, 300, 4e6, 3e6), -1, brokerMetrics(101, 6e8, 40, 5), brokerMetrics(201, 4e8, 40, 7))}
	r2 := &roundResult{ack: newHistogram(), e2e: newHistogram(), hasMetrics: true, wallSeconds: 10, produced: 1000, producedBytes: 1e9, steady: 1000, steadyBytes: 1e9,
		produceSeconds: 10, consumed: 1000, consumedBytes: 1e9, consumeSeconds: 10,
		before:     clusterSnapshot(t, etcdMetrics(2e6, 300, 4e6, 3e6), -1, brokerMetrics(101, 6e8, 40, 5), brokerMetrics(201, 4e8, 40, 7)),
		after:      clusterSnapshot(t, etcdMetrics(6e6, 600, 8e6, 2e6), 1, brokerMetrics(301, 1.6e9, 80, 9), brokerMetrics(301, 4e8, 40, 8)),
		compaction: &EtcdCompaction{Revision: 900, DBSizeBefore: 8e6, DBSizeAfter: 1e6, Keys: 120, KeysPerPartition: 12},
		failover:   &FailoverFigure{KilledNode: 1, Moved: 4, Recovered: 4, MinSeconds: 3, MedianSeconds: 4, MaxSeconds: 9},
		owned:      map[int32]int{0: 40, 1: 10}}
	if got := r2.after.MetaTxns; got != 602 {
		t.Fatalf("summed txns %v, want 602", got)
	}
	if got := r2.after.Objects; got != 120 {
		t.Fatalf("summed objects %v, want 120", got)
	}
	spec := TargetSpec{Kind: "cluster", Cluster: ClusterLaunch{Sediment: SedimentLaunch{Flags: []string{"--upload-interval", "100ms"}}}}
	tr := mergeRounds(spec, []*roundResult{r1, r2}, 0)
	c := tr.Cluster
	if c == nil || len(c.Brokers) != 2 {
		t.Fatalf("cluster figure %+v", c)
	}
	// Two rounds: 20 s, 2 GB produced; broker 0: 300 txns, 1.6 GB
	// appended; broker 1: 300 txns, 0.4 GB, killed in the second.
	b0, b1 := c.Brokers[0], c.Brokers[1]
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"txns", c.EtcdTxns, 600}, {"txns/s", c.EtcdTxnsPerSec, 30}, {"txns/GB", c.EtcdTxnsPerGB, 300},
		{"received", c.EtcdReceivedBytes, 6e6}, {"received/GB", c.EtcdReceivedPerGB, 3e6}, {"sent", c.EtcdSentBytes, 0},
		{"server txns", c.EtcdServerTxns, 600}, {"db size", c.EtcdDBSize, 8e6}, {"db in use", c.EtcdDBInUse, 2e6},
		{"intervals", c.UploadIntervals, 200}, {"b0 rounds", b0.UploadRounds, 40}, {"b1 rounds", b1.UploadRounds, 40},
		{"rounds", c.UploadRounds, 40}, {"hours", c.HourEquivalents, 40.0 / 14400},
		{"b0 txns/s", b0.EtcdTxnsPerSec, 15}, {"b0 txns/GB", b0.EtcdTxnsPerGB, 150}, {"b0 own", b0.EtcdTxnsPerOwnGB, 187.5},
		{"b0 objects", b0.Objects, 80}, {"b0 cpu", b0.CPUSeconds, 9},
		{"b1 txns", b1.EtcdTxns, 300}, {"b1 own", b1.EtcdTxnsPerOwnGB, 750}, {"b1 appended", b1.AppendedBytes, 4e8},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if b0.Killed || !b1.Killed || b1.Rack != "r1" || c.NoTxnMetric || c.Compaction.Revision != 900 || c.Failover.MaxSeconds != 9 {
		t.Errorf("cluster figure %+v", c)
	}
	if tr.Broker == nil || tr.Broker.CPUSeconds != 17 {
		t.Errorf("broker figure (the sum over the brokers) %+v", tr.Broker)
	}
	res := &Results{Workload: &Workload{Name: "w"}, Targets: []TargetResult{tr}}
	md := Markdown(res)
	for _, want := range []string{
		"| node 0 | r0 | 15.0 | 150.0 | 1.6 GB | 187.5 | 40 | 80 | 40 | 9.0 |",
		"| node 1 (killed) | r1 | 15.0 | 150.0 | 400 MB | 750.0 | 10 | 40 | 40 | 8.0 |",
		"| **total** | | 30.0 | 300.0 |",
		"(**3.0 MB per GB produced**)",
		"compacted it to revision 900",
		"200 upload intervals of 100 ms; the brokers' objects stand for 40 upload rounds each (objects ÷ ⌈partitions owned ÷ 32⌉), **0.003 hours of uploads**",
		"node 1, owner of 4 partitions",
		"**min 3.00 s, median 4.00 s, max 9.00 s** (4 of 4",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
}

// TestClusterFiguresNoTxnMetric: brokers without the metadata metric
// give no transaction figures (—), not zeros.
func TestClusterFiguresNoTxnMetric(t *testing.T) {
	plain := "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 1\n"
	r := &roundResult{ack: newHistogram(), e2e: newHistogram(), hasMetrics: true, wallSeconds: 1, produced: 10, producedBytes: 1e6, steady: 10, steadyBytes: 1e6, produceSeconds: 1,
		before: clusterSnapshot(t, etcdMetrics(0, 0, 1, 1), -1, plain),
		after:  clusterSnapshot(t, etcdMetrics(5, 1, 1, 1), -1, plain)}
	tr := mergeRounds(TargetSpec{Kind: "cluster"}, []*roundResult{r}, 0)
	if !tr.Cluster.NoTxnMetric {
		t.Fatalf("no metadata metric not noticed: %+v", tr.Cluster)
	}
	md := Markdown(&Results{Workload: &Workload{Name: "w"}, Targets: []TargetResult{tr}})
	if !strings.Contains(md, "| node 0 | r0 | — | — |") || !strings.Contains(md, "export no sediment_metadata_requests_total") {
		t.Errorf("summary:\n%s", md)
	}
}
