package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startTestEtcd starts the etcd binary of .bin (make .bin/etcd) or
// SEDIMENT_ETCD, and stops it when the test ends.
func startTestEtcd(t *testing.T) *etcdProcess {
	t.Helper()
	e, err := startEtcd(context.Background(), filepath.Join(t.TempDir(), "etcd.log"))
	if err != nil {
		t.Fatalf("%v (make test builds it: make .bin/etcd)", err)
	}
	t.Cleanup(func() { e.stop() })
	return e
}

// TestEtcdProcess starts a real etcd process, writes through it, reads
// its metrics, the owners of a topic's partitions from keys laid out as
// the cluster writes them, compacts and defragments it, and stops it.
func TestEtcdProcess(t *testing.T) {
	t.Parallel()
	e := startTestEtcd(t)
	ctx := context.Background()
	before, err := scrapeEtcd(ctx, e.metricsURL())
	if err != nil || before.DBSize <= 0 {
		t.Fatalf("etcd metrics: %+v %v", before, err)
	}
	const prefix = "bench/"
	id := "0123456789abcdef0123456789abcdef"
	put := func(k, v string) {
		t.Helper()
		if _, err := e.client.Put(ctx, prefix+k, v); err != nil {
			t.Fatal(err)
		}
	}
	put("topics/events", `{"name":"events","id":"`+id+`","partitions":4}`)
	for p, node := range []int{2, 1, 2, 0} {
		put(fmt.Sprintf("own/parts/%s/%010d", id, p), fmt.Sprintf(`{"node_id":%d,"epoch":%d}`, node, p+1))
	}
	for i := range 50 { // history for the compaction to drop
		put("topics/events-state", strings.Repeat("x", i*100))
	}
	owners, err := readOwners(ctx, e.client, prefix, []string{"events"})
	if err != nil {
		t.Fatal(err)
	}
	node, moved := busiest(owners)
	if node != 2 || len(moved) != 2 || moved[0] != (topicPartition{"events", 0}) || moved[1] != (topicPartition{"events", 2}) {
		t.Errorf("owners %v: busiest node %d with %v, want node 2 with events/0 and events/2", owners, node, moved)
	}
	if _, err := readOwners(ctx, e.client, prefix, []string{"absent"}); err == nil || !strings.Contains(err.Error(), "no key bench/topics/absent") {
		t.Errorf("owners of a topic not in etcd: %v", err)
	}
	after, err := scrapeEtcd(ctx, e.metricsURL())
	if err != nil || after.ReceivedBytes <= before.ReceivedBytes || after.Puts < before.Puts+55 || after.Keys != 6 {
		t.Errorf("etcd metrics after 55 puts: %+v (before %+v) %v", after, before, err)
	}
	c, err := e.compactDefrag(ctx, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if c.Revision < 56 || c.Keys != 6 || c.DBSizeAfter <= 0 || c.DBSizeAfter > c.DBSizeBefore || c.DBInUseAfter > c.DBInUseBefore {
		t.Errorf("compaction: %+v", c)
	}
	if _, err := e.compactDefrag(ctx, prefix); err != nil { // at a revision already compacted
		t.Errorf("second compaction: %v", err)
	}
	dir := e.dir
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-e.exited:
	default:
		t.Error("etcd still running after stop")
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("etcd data dir left behind: %v", err)
	}
}

// TestEtcdBinaryMissing: without the binary, the error says how to get it.
func TestEtcdBinaryMissing(t *testing.T) {
	t.Setenv("SEDIMENT_ETCD", filepath.Join(t.TempDir(), "no-etcd"))
	_, err := startEtcd(context.Background(), "")
	if err == nil || !strings.Contains(err.Error(), "make .bin/etcd") || !strings.Contains(err.Error(), "SEDIMENT_ETCD=") {
		t.Fatalf("got %v, want an error naming make .bin/etcd", err)
	}
	_, err = launchCluster(context.Background(), ClusterLaunch{Sediment: SedimentLaunch{Bin: "broker"}})
	if err == nil || !strings.Contains(err.Error(), "give --minio") {
		t.Fatalf("cluster without a bucket: %v", err)
	}
}

// TestFailoverTiming: acknowledgements of records sent before the kill,
// or to partitions that did not move, do not count; the first after it
// times its partition; the figure spreads them.
func TestFailoverTiming(t *testing.T) {
	f := &failover{}
	kill := time.Unix(100, 0)
	f.killAt = kill
	f.fig = FailoverFigure{KilledNode: 1, Moved: 3}
	f.first = map[topicPartition]time.Duration{{"a", 0}: -1, {"a", 1}: -1, {"a", 2}: -1}
	at := func(s float64) time.Time { return kill.Add(time.Duration(s * float64(time.Second))) }
	f.acked(topicPartition{"a", 0}, at(1), at(2)) // not armed yet: ignored
	f.armed.Store(true)
	f.acked(topicPartition{"a", 0}, at(-1), at(0.5)) // sent before the kill: the old owner's
	f.acked(topicPartition{"a", 0}, at(1), at(4))
	f.acked(topicPartition{"a", 0}, at(1), at(5)) // not the first
	f.acked(topicPartition{"a", 1}, at(2), at(6))
	f.acked(topicPartition{"b", 0}, at(1), at(1.5)) // did not move
	fig := f.figure()
	if fig.Recovered != 2 || fig.MinSeconds != 4 || fig.MedianSeconds != 5 || fig.MaxSeconds != 6 {
		t.Errorf("figure %+v: want 2 of 3 recovered, 4 / 5 / 6 s", fig)
	}
	want := []PartitionFailover{{"a", 0, 4}, {"a", 1, 6}, {"a", 2, -1}}
	if fmt.Sprint(fig.Partitions) != fmt.Sprint(want) {
		t.Errorf("partitions %v, want %v", fig.Partitions, want)
	}
	for _, tc := range []struct {
		xs            []float64
		lo, med, high float64
	}{{nil, 0, 0, 0}, {[]float64{3}, 3, 3, 3}, {[]float64{5, 1, 3}, 1, 3, 5}} {
		if lo, med, high := spread(tc.xs); lo != tc.lo || med != tc.med || high != tc.high {
			t.Errorf("spread(%v) = %v %v %v", tc.xs, lo, med, high)
		}
	}
	if n, parts := busiest(map[topicPartition]int32{{"a", 0}: 3, {"a", 1}: 1}); n != 1 || len(parts) != 1 {
		t.Errorf("a tie goes to the lowest node: got %d %v", n, parts)
	}
}
