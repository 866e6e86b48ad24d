package protocol

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/partition"
)

// testOwnership is the log's ownership as a test decides it: the owner
// keys it wrote through metadata.AcquirePartition, by partition.
type testOwnership struct {
	mu     sync.Mutex // guards fences
	fences map[int32]metadata.Cond
}

func (o *testOwnership) Fence(_ metadata.TopicID, p int32) (metadata.Cond, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f, ok := o.fences[p]
	return f, ok
}

func (o *testOwnership) Valid() bool  { return true }
func (o *testOwnership) Sweeps() bool { return false }

func (o *testOwnership) set(p int32, f *metadata.Cond) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if f == nil {
		delete(o.fences, p)
		return
	}
	o.fences[p] = *f
}

// replicaBroker is node 0 (rack-a) of startClusterBroker's view, with a
// log that owns partitions only as the test acquires them, under object
// durability; node 1 is in rack-b.
func replicaBroker(t *testing.T) (*testBroker, *fakeView, *testOwnership, *prometheus.Registry) {
	t.Helper()
	own := &testOwnership{fences: map[int32]metadata.Cond{}}
	reg := prometheus.NewRegistry()
	view := newFakeView()
	b := startBroker(t, withCluster(0, view), withTopic("owned", ownedID, 4), withLogOptions(func(o *partition.Options) {
		o.Ownership, o.Durability, o.UploadInterval = own, partition.DurabilityObject, 5*time.Millisecond
	}), func(s *brokerSetup) { s.cfg.Registry = reg })
	view.addBroker(selfBroker(b, selfRack))
	view.addBroker(Broker{NodeID: 1, Host: "127.0.0.2", Port: otherPort, Rack: otherRack})
	return b, view, own, reg
}

// acquireHere makes node 0 the owner of partition p and returns its fence
// and owner epoch.
func acquireHere(t *testing.T, b *testBroker, view *fakeView, own *testOwnership, p int32) (metadata.Cond, int32) {
	t.Helper()
	ctx := context.Background()
	fence, epoch, err := b.meta.AcquirePartition(ctx, ownedID, p, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	own.set(p, &fence)
	if err := b.log.Acquire(ctx, ownedID, p); err != nil {
		t.Fatal(err)
	}
	view.setLeader(ownedID, p, 0, epoch)
	return fence, epoch
}

// hand gives partition p to node 1: released here, owned there.
func hand(t *testing.T, b *testBroker, view *fakeView, own *testOwnership, p int32, fence metadata.Cond) {
	t.Helper()
	ctx := context.Background()
	if err := b.log.Release(ctx, ownedID, p); err != nil {
		t.Fatal(err)
	}
	if err := b.meta.ReleasePartition(ctx, fence); err != nil {
		t.Fatal(err)
	}
	own.set(p, nil)
	view.setLeader(ownedID, p, 1, otherEpoch)
}

// produceCommitted produces n batches of 2 records to p (acknowledged once
// committed, object durability) and returns the committed end.
func produceCommitted(t *testing.T, c *rawClient, p int32, n int) int64 {
	t.Helper()
	var end int64
	for range n {
		end = c.mustProduce("owned", p, plainBatch(2, 8, 1).build(t)) + 2
	}
	return end
}

func counterValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestFetchFromReplica: a partition another broker owns is served to a
// v11+ consumer from its committed log, with the committed end as high
// watermark and nothing past it; below v11 and to a follower it is
// NOT_LEADER_OR_FOLLOWER, and so it is to a read_committed consumer; below
// the log start OFFSET_OUT_OF_RANGE with the
// offsets that send the client back to the leader. The bytes are counted.
func TestFetchFromReplica(t *testing.T) {
	t.Parallel()
	b, view, own, reg := replicaBroker(t)
	c := b.dial()
	fence, epoch := acquireHere(t, b, view, own, 1)
	end := produceCommitted(t, c, 1, 3)
	topic, _ := b.log.TopicByID(ownedID)
	if _, err := b.log.DeleteRecords(context.Background(), topic.Partition(1), 2); err != nil {
		t.Fatal(err)
	}
	hand(t, b, view, own, 1, fence)

	// A read may stop at an object's end: read on, as a consumer does.
	var batches, bytes int
	for next, i := int64(2), 0; next < end; i++ {
		sp := c.fetchOne(fetchReq(11, "owned", ownedID, 1, next))
		wantCode(t, "replica fetch", sp.ErrorCode, 0)
		got := splitFetched(t, sp.RecordBatches)
		if len(got) == 0 || i > 4 || sp.HighWatermark != end || sp.LogStartOffset != 2 {
			t.Fatalf("replica fetch at %d: %d batches, hw %d, log start %d; want some, %d, 2", next, len(got), sp.HighWatermark, sp.LogStartOffset, end)
		}
		batches, bytes, next = batches+len(got), bytes+len(sp.RecordBatches), next+2*int64(len(got))
	}
	if batches != 2 {
		t.Errorf("%d batches from the log start, want 2", batches)
	}
	if got := counterValue(t, reg, "sediment_fetch_replica_bytes_total"); got != float64(bytes) {
		t.Errorf("replica bytes %v, want %d", got, bytes)
	}
	tail := fetchReq(18, "owned", ownedID, 1, end)
	tail.MaxWaitMillis, tail.MinBytes = 250, 1
	sp := c.fetchOne(tail)
	if sp.ErrorCode != 0 || len(sp.RecordBatches) != 0 || sp.HighWatermark != end {
		t.Fatalf("fetch at the committed end: code %d, %d bytes, hw %d", sp.ErrorCode, len(sp.RecordBatches), sp.HighWatermark)
	}
	sp = c.fetchOne(fetchReq(12, "owned", ownedID, 1, 0))
	wantCode(t, "below the log start", sp.ErrorCode, kerr.OffsetOutOfRange.Code)
	if sp.LogStartOffset != 2 || sp.HighWatermark != end {
		t.Errorf("below the log start: log start %d hw %d, want 2 %d", sp.LogStartOffset, sp.HighWatermark, end)
	}
	// The client's last fetched epoch is checked against the committed
	// log's epochs, as a follower checks its own (KIP-320).
	same := fetchReq(12, "owned", ownedID, 1, 3)
	same.Topics[0].Partitions[0].LastFetchedEpoch = epoch
	if sp := c.fetchOne(same); sp.ErrorCode != 0 || len(sp.RecordBatches) == 0 || sp.DivergingEpoch.Epoch != -1 {
		t.Errorf("last fetched epoch %d: code %d, %d bytes, diverging %+v", epoch, sp.ErrorCode, len(sp.RecordBatches), sp.DivergingEpoch)
	}
	older := fetchReq(12, "owned", ownedID, 1, 3)
	older.Topics[0].Partitions[0].LastFetchedEpoch = epoch - 1
	if sp := c.fetchOne(older); len(sp.RecordBatches) != 0 || (sp.ErrorCode == 0 && sp.DivergingEpoch.Epoch == -1) {
		t.Errorf("last fetched epoch %d: code %d, %d bytes, diverging %+v; want no records and a diverging epoch or an error",
			epoch-1, sp.ErrorCode, len(sp.RecordBatches), sp.DivergingEpoch)
	} else {
		t.Logf("last fetched epoch %d at 3: code %d, diverging %+v", epoch-1, sp.ErrorCode, sp.DivergingEpoch)
	}
	wantCode(t, "v10", c.fetchOne(fetchReq(10, "owned", ownedID, 1, 2)).ErrorCode, kerr.NotLeaderForPartition.Code)
	// Only the owner knows the open transactions, so the LSO.
	committed := fetchReq(18, "owned", ownedID, 1, 2)
	committed.IsolationLevel = readCommitted
	wantCode(t, "read_committed", c.fetchOne(committed).ErrorCode, kerr.NotLeaderForPartition.Code)
	follower := fetchReq(11, "owned", ownedID, 1, 2)
	follower.ReplicaID = 1
	wantCode(t, "follower", c.fetchOne(follower).ErrorCode, kerr.NotLeaderForPartition.Code)
}

// TestFetchPreferredReadReplica: the owner sends a consumer of another
// rack to a broker of that rack, with no records, while its offset is
// committed; it serves the consumer itself at the tail, in its own rack,
// without a rack, below v11, and when it reads read_committed.
func TestFetchPreferredReadReplica(t *testing.T) {
	t.Parallel()
	b, view, own, reg := replicaBroker(t)
	c := b.dial()
	_, _ = acquireHere(t, b, view, own, 0)
	end := produceCommitted(t, c, 0, 2)
	isolation := int8(0)
	fetch := func(v int16, rack string, offset int64) kmsg.FetchResponseTopicPartition {
		req := fetchReq(v, "owned", ownedID, 0, offset)
		req.Rack, req.IsolationLevel = rack, isolation
		return c.fetchOne(req)
	}
	sp := fetch(11, otherRack, 0)
	if sp.ErrorCode != 0 || sp.PreferredReadReplica != 1 || len(sp.RecordBatches) != 0 || sp.HighWatermark != end {
		t.Fatalf("consumer in rack-b: code %d, preferred %d, %d bytes, hw %d; want 0, 1, none, %d",
			sp.ErrorCode, sp.PreferredReadReplica, len(sp.RecordBatches), sp.HighWatermark, end)
	}
	if n := counterValue(t, reg, "sediment_fetch_preferred_replica_total"); n != 1 {
		t.Errorf("preferred replica answers %v, want 1", n)
	}
	for _, tc := range []struct {
		what   string
		v      int16
		rack   string
		offset int64
	}{
		{"at the tail", 18, otherRack, end},
		{"in the owner's rack", 18, selfRack, 0},
		{"no rack", 18, "", 0},
		{"rack unknown", 18, "rack-z", 0},
		{"v10", 10, otherRack, 0},
		{"read_committed", 18, otherRack, 0},
	} {
		if tc.what == "read_committed" {
			isolation = readCommitted
		}
		sp := fetch(tc.v, tc.rack, tc.offset)
		if sp.ErrorCode != 0 || sp.PreferredReadReplica != -1 {
			t.Errorf("%s: code %d, preferred %d; want served here", tc.what, sp.ErrorCode, sp.PreferredReadReplica)
		}
		if tc.offset < end && len(sp.RecordBatches) == 0 {
			t.Errorf("%s: no records", tc.what)
		}
	}
}
