package main

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestClusterRackAwareReads (issue 18, test 8): three brokers in racks r1
// to r3. A topic's records are produced and committed (object durability
// acknowledges after the commit). For every partition, a franz-go consumer
// in the rack of a broker that does not own it reads the partition from
// the start: the owner answers its first fetch with that broker as
// preferred read replica, and that broker serves every record from the
// bucket. Each record is read exactly once, in order, byte for byte; the
// client saw no batch of the partition come from its owner; the rack
// broker's sediment_fetch_replica_bytes_total grew by at least the bytes
// it served, and each owner's sediment_fetch_preferred_replica_total
// counted its redirects.
func TestClusterRackAwareReads(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	const topic, partitions, total = "racked", 6, 600
	createTopics(t, c.addrs(1)[0], topic, partitions)
	owners := c.waitOwned(topic, partitions, nil)
	produceNumbered(t, c.addrs(1)[0], topic, total, partitions)

	replicaBefore := map[int32]float64{}
	redirectsBefore := map[int32]float64{}
	for _, id := range c.ids() {
		replicaBefore[id] = c.proc(id).metric("sediment_fetch_replica_bytes_total")
		redirectsBefore[id] = c.proc(id).metric("sediment_fetch_preferred_replica_total")
	}
	served := map[int32]int{} // record bytes each rack broker served, as the client counted them
	redirected := map[int32]bool{}
	for p := range int32(partitions) {
		owner := owners[p].Node
		reader := owner%3 + 1 // a broker, in its own rack, that does not own p
		read := readRackAware(t, c.addrs(owner)[0], topic, p, fmt.Sprintf("r%d", reader), total/partitions)
		for i, r := range read.records {
			if r.Offset != int64(i) || !bytes.Equal(r.Value, payload(i*partitions+int(p))) {
				t.Fatalf("partition %d: record %d at offset %d has the wrong bytes (want record %d)", p, i, r.Offset, i*partitions+int(p))
			}
		}
		if n := read.bytesFrom[owner]; n != 0 {
			t.Errorf("partition %d: its owner, node %d, served %d bytes to a consumer of rack r%d", p, owner, n, reader)
		}
		if read.bytesFrom[reader] == 0 {
			t.Errorf("partition %d: node %d of rack r%d served nothing; batches came from %v", p, reader, reader, read.bytesFrom)
		}
		served[reader] += read.bytesFrom[reader]
		redirected[owner] = true
	}
	for _, id := range c.ids() {
		grew := c.proc(id).metric("sediment_fetch_replica_bytes_total") - replicaBefore[id]
		if grew < float64(served[id]) {
			t.Errorf("node %d: sediment_fetch_replica_bytes_total grew by %v, but it served %d bytes as a replica", id, grew, served[id])
		}
		redirects := c.proc(id).metric("sediment_fetch_preferred_replica_total") - redirectsBefore[id]
		if redirected[id] && redirects == 0 {
			t.Errorf("node %d owns a partition read from another rack but counted no preferred replica answer", id)
		}
	}
	t.Logf("replica bytes served by node: %v", served)
}

// rackRead is what one rack-aware consumer read: its records in order, and
// the batch bytes each broker served it.
type rackRead struct {
	records   []*kgo.Record
	bytesFrom map[int32]int
}

// batchSources is a franz-go hook counting, per broker, the bytes of the
// batches it served.
type batchSources struct {
	mu    sync.Mutex
	bytes map[int32]int
}

func (h *batchSources) OnFetchBatchRead(meta kgo.BrokerMetadata, _ string, _ int32, m kgo.FetchBatchMetrics) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.bytes[meta.NodeID] += m.CompressedBytes
}

// readRackAware consumes partition p of topic from the start, with
// client.rack = rack, bootstrapping from addr, until it has want records.
func readRackAware(t *testing.T, addr, topic string, p int32, rack string, want int) rackRead {
	t.Helper()
	ctx := testCtx(t, 60*time.Second)
	hook := &batchSources{bytes: map[int32]int{}}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.Rack(rack), kgo.WithHooks(hook),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().AtStart()}}),
		kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out rackRead
	for len(out.records) < want {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("partition %d from rack %s: read %d of %d records: %v", p, rack, len(out.records), want, err)
		}
		fs.EachError(func(tp string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", tp, p, err) })
		fs.EachRecord(func(r *kgo.Record) { out.records = append(out.records, r) })
	}
	if len(out.records) != want {
		t.Fatalf("partition %d: %d records, want %d", p, len(out.records), want)
	}
	hook.mu.Lock()
	out.bytesFrom = hook.bytes
	hook.mu.Unlock()
	return out
}
