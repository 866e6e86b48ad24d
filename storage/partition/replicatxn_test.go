package partition

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/sediment-io/sediment/internal/testwait"
)

// TestReplicaReadCommitted: a broker that does not own a partition reads
// it as a read_committed consumer from the bucket, with the last stable
// offset and the aborted transactions of the committed producer records:
// record by record what the owner's ReadCommitted answers, with a
// committed, an aborted and an open transaction, and again after the
// open one commits and another aborts.
func TestReplicaReadCommitted(t *testing.T) {
	for _, d := range durabilityModes() {
		t.Run(durabilityName(d), func(t *testing.T) { runReplicaReadCommitted(t, newCluster(t), d) })
	}
	t.Run("etcd", func(t *testing.T) { runReplicaReadCommitted(t, newEtcdCluster(t), DurabilityWAL) })
}

func runReplicaReadCommitted(t *testing.T, c *cluster, d Durability) {
	eA, ownA := c.broker(1, txnOpts(d))
	eB, _ := c.broker(2, txnOpts(d))
	a := eA.open()
	pa := createTopic(t, a, "t", 1, nil).Partition(0)
	acquire(t, a, ownA, pa)
	b := eB.open()
	tb, ok := b.Topic("t")
	if !ok {
		t.Fatal("B does not know the topic")
	}
	pb := tb.Partition(0)

	before, open := txnScenario(t, a, pa)
	waitUploaded(t, pa)
	_, end := pa.Offsets()
	got := readCommittedVia(t, b.ReadReplicaCommitted, pb, 0)
	if !reflect.DeepEqual(got, before) {
		t.Fatalf("replica reads %+v, owner %+v", got, before)
	}
	res, err := b.ReadReplicaCommitted(context.Background(), pb, 0, 1<<20, true)
	if err != nil || !res.Replica || res.LastStableOffset != open || res.HighWatermark != end {
		t.Fatalf("replica answer: replica=%v lso=%d hw=%d %v; want lso %d hw %d",
			res.Replica, res.LastStableOffset, res.HighWatermark, err, open, end)
	}
	// At and past the last stable offset: no batches, no error.
	if res, err := b.ReadReplicaCommitted(context.Background(), pb, open, 1<<20, true); err != nil || res.Bytes != 0 {
		t.Fatalf("replica read at the last stable offset: %d bytes, %v", res.Bytes, err)
	}
	// The read_uncommitted replica read still reads up to the committed end.
	if res, err := b.ReadReplica(context.Background(), pb, open, 1<<20, true); err != nil || res.Bytes == 0 || res.LastStableOffset != end {
		t.Fatalf("read_uncommitted replica read at %d: %d bytes, lso %d, %v", open, res.Bytes, res.LastStableOffset, err)
	}
	// On the owner it is the owner's read_committed read.
	if own := readCommittedVia(t, a.ReadReplicaCommitted, pa, 0); !reflect.DeepEqual(own, before) {
		t.Fatalf("owner's ReadReplicaCommitted %+v, ReadCommitted %+v", own, before)
	}
	if res, err := a.ReadReplicaCommitted(context.Background(), pa, 0, 1<<20, true); err != nil || res.Replica {
		t.Fatalf("owner's ReadReplicaCommitted: replica=%v %v", res.Replica, err)
	}

	// The open transaction commits; another of producer 8 aborts.
	marker(t, a, pa, 7, 0, true, 0)
	produceWait(t, a, pa, txnBatch(8, 0, 2, "a2"))
	produceWait(t, a, pa, plainBatch(9, 3, "p3"))
	marker(t, a, pa, 8, 0, false, 0)
	produceWait(t, a, pa, plainBatch(9, 4, "p4"))
	waitUploaded(t, pa)
	after := readCommittedAll(t, a, pa)
	if !reflect.DeepEqual(after.values, []string{"p0", "c0", "p1", "o0", "p2", "p3", "p4"}) || len(after.aborted) != 2 {
		t.Fatalf("owner after the commit and the abort: %+v", after)
	}
	testwait.Until(t, 10*time.Second, func() bool { // the replica reads metadata again within replicaMaxAge
		got = readCommittedVia(t, b.ReadReplicaCommitted, pb, 0)
		return reflect.DeepEqual(got, after)
	}, "replica reads %v, owner %v", testwait.Later(func() string { return fmt.Sprintf("%+v", got) }), testwait.Later(func() string { return fmt.Sprintf("%+v", after) }))
}

// However many read_committed fetches wait at the last stable offset of
// an open transaction, metadata is read at most once per
// replicaRefreshMin (plus the first read): the committed end, and the
// producer records only when that end moved.
func TestReplicaReadCommittedBoundsMetadataReads(t *testing.T) {
	rp := newReplicaPair(t)
	acked := waitAsync(rp.a, appendOK(t, rp.a, rp.pa, txnBatch(7, 0, 0, "o0")))
	uploadOwned(t, rp.a)
	if err := <-acked; err != nil {
		t.Fatalf("append: %v", err)
	}
	res, err := rp.b.ReadReplicaCommitted(context.Background(), rp.pb, 0, 1<<20, true)
	if err != nil || res.Bytes != 0 || res.LastStableOffset != 0 || res.HighWatermark != 1 {
		t.Fatalf("read at the open transaction: %d bytes, lso %d, hw %d, %v; want none, 0, 1",
			res.Bytes, res.LastStableOffset, res.HighWatermark, err)
	}
	before := rp.bkv.reads.Load()
	start := time.Now()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if _, err := rp.b.ReadReplicaCommitted(context.Background(), rp.pb, 0, 1<<20, true); err != nil {
					t.Errorf("read at the last stable offset: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	reads := rp.bkv.reads.Load() - before
	bound := 1 + int64(time.Since(start)/replicaRefreshMin)
	if reads > bound {
		t.Fatalf("%d partition-state reads for 400 fetches in %v, want at most %d", reads, time.Since(start), bound)
	}
}
