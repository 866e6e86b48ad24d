package partition

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sediment-io/sediment/internal/testwait"
	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/record"
)

// stateReadsKV counts the reads of partition states (metadata's parts/
// keys), and fails them while fail is set.
type stateReadsKV struct {
	metadata.KV
	reads atomic.Int64
	fail  atomic.Bool
}

func (k *stateReadsKV) Get(ctx context.Context, key string) (metadata.Item, bool, error) {
	if strings.HasPrefix(key, "parts/") {
		k.reads.Add(1)
		if k.fail.Load() {
			return metadata.Item{}, false, errors.New("injected: metadata unavailable")
		}
	}
	return k.KV.Get(ctx, key)
}

// replicaPair is an owner A (object durability) of partition p and a
// broker B that does not own it, on one metadata store and one bucket.
type replicaPair struct {
	a, b   *Log
	pa, pb *Partition
	bkv    *stateReadsKV
}

func newReplicaPair(t *testing.T) replicaPair {
	c := newCluster(t)
	object := func(o *Options) { o.Durability = DurabilityObject }
	eA, ownA := c.broker(1, object)
	eB, _ := c.broker(2, object)
	bkv := &stateReadsKV{KV: c.shared}
	eB.meta = metadata.NewStore(bkv)
	a := eA.open()
	pa := createTopic(t, a, "t", 1, nil).Partition(0)
	acquire(t, a, ownA, pa)
	b := eB.open()
	tb, ok := b.Topic("t")
	if !ok {
		t.Fatal("B does not know the topic")
	}
	return replicaPair{a: a, b: b, pa: pa, pb: tb.Partition(0), bkv: bkv}
}

// commit appends vals on the owner and waits until they are committed.
func (rp replicaPair) commit(t *testing.T, seq int32, vals ...string) {
	t.Helper()
	acked := waitAsync(rp.a, appendOK(t, rp.a, rp.pa, idem(seq, vals...)))
	uploadOwned(t, rp.a)
	if err := <-acked; err != nil {
		t.Fatalf("append: %v", err)
	}
}

// readReplicaAll reads p through ReadReplica from offset until an empty
// answer, and returns the values by offset and the last answer.
func readReplicaAll(t *testing.T, l *Log, p *Partition, from int64) (map[int64]string, FetchResult) {
	t.Helper()
	got := map[int64]string{}
	off := from
	for range 1000 {
		res, err := l.ReadReplica(context.Background(), p, off, 1<<20, true)
		if err != nil {
			t.Fatalf("replica read at %d: %v", off, err)
		}
		batches := batchesOf(t, res)
		if len(batches) == 0 {
			return got, res
		}
		for _, raw := range batches {
			for o, v := range recordValues(t, raw) {
				if o >= off {
					got[o] = string(v)
				}
			}
			off = record.BaseOffset(raw) + int64(record.ReadHeader(raw).LastOffsetDelta) + 1
		}
	}
	t.Fatal("replica read did not end")
	return nil, FetchResult{}
}

// A broker that does not own a partition serves its committed log from
// the bucket, never above the committed end, which is its high watermark;
// Read (the owner's path) still refuses it.
func TestReplicaReadServesCommittedLog(t *testing.T) {
	rp := newReplicaPair(t)
	rp.commit(t, 0, "a", "b", "c")
	if _, err := rp.b.Read(context.Background(), rp.pb, 0, 1<<20, true); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("owner read on B: %v, want ErrNotLeader", err)
	}
	got, last := readReplicaAll(t, rp.b, rp.pb, 0)
	if len(got) != 3 || got[0] != "a" || got[2] != "c" {
		t.Fatalf("replica read %v, want a b c at 0..2", got)
	}
	if !last.Replica || last.HighWatermark != 3 || last.LogStartOffset != 0 {
		t.Fatalf("answer at the end: replica=%v hw=%d log start=%d, want true 3 0", last.Replica, last.HighWatermark, last.LogStartOffset)
	}
	// Appended on the owner but not committed: not served.
	acked := waitAsync(rp.a, appendOK(t, rp.a, rp.pa, idem(3, "d")))
	res, err := rp.b.ReadReplica(context.Background(), rp.pb, 3, 1<<20, true)
	if err != nil || res.Bytes != 0 || res.HighWatermark != 3 {
		t.Fatalf("read past the committed end: %d bytes, hw %d, %v; want none, 3", res.Bytes, res.HighWatermark, err)
	}
	uploadOwned(t, rp.a)
	if err := <-acked; err != nil {
		t.Fatal(err)
	}
	// The committed end is read again once a fetch asks at it.
	testwait.Until(t, 10*time.Second, func() bool { // polling the replica, as a consumer does
		got, _ = readReplicaAll(t, rp.b, rp.pb, 3)
		return got[3] == "d"
	}, "the replica never served the new commit: %v", testwait.Later(func() string { return fmt.Sprint(got) }))
	// The owner reads as before, not as a replica.
	own, err := rp.a.ReadReplica(context.Background(), rp.pa, 0, 1<<20, true)
	if err != nil || own.Replica || own.Bytes == 0 {
		t.Fatalf("owner's read: replica=%v bytes=%d %v", own.Replica, own.Bytes, err)
	}
}

// However many fetches ask at the end, the committed end is read at most
// once per replicaRefreshMin (plus the first read).
func TestReplicaReadBoundsMetadataReads(t *testing.T) {
	rp := newReplicaPair(t)
	rp.commit(t, 0, "a")
	if _, err := rp.b.ReadReplica(context.Background(), rp.pb, 0, 1<<20, true); err != nil {
		t.Fatal(err)
	}
	before := rp.bkv.reads.Load()
	start := time.Now()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if _, err := rp.b.ReadReplica(context.Background(), rp.pb, 1, 1<<20, true); err != nil {
					t.Errorf("read at the end: %v", err)
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

// Below the log start is OFFSET_OUT_OF_RANGE, with the offsets the client
// needs to go back to the owner; a deleted topic is unknown.
func TestReplicaReadLogStartAndDeletion(t *testing.T) {
	rp := newReplicaPair(t)
	rp.commit(t, 0, "a", "b")
	rp.commit(t, 2, "c", "d")
	if _, err := rp.a.DeleteRecords(context.Background(), rp.pa, 2); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 10*time.Second, func() bool {
		res, err := rp.b.ReadReplica(context.Background(), rp.pb, 0, 1<<20, true)
		if errors.Is(err, ErrOffsetOutOfRange) {
			if res.LogStartOffset != 2 || res.HighWatermark != 4 || !res.Replica {
				t.Fatalf("out of range answer: log start %d hw %d replica %v, want 2 4 true", res.LogStartOffset, res.HighWatermark, res.Replica)
			}
			return true
		}
		if err != nil {
			t.Fatalf("read below the log start: %v", err)
		}
		return false
	}, "the replica never saw the new log start")
	got, _ := readReplicaAll(t, rp.b, rp.pb, 2)
	if len(got) != 2 || got[2] != "c" || got[3] != "d" {
		t.Fatalf("read from the log start: %v", got)
	}
	if err := rp.a.DeleteTopic(context.Background(), "t"); err != nil {
		t.Fatal(err)
	}
	// Unknown once B's view is older than replicaMaxAge, without a topic sync...
	testwait.Until(t, 10*time.Second, func() bool {
		_, err := rp.b.ReadReplica(context.Background(), rp.pb, 2, 1<<20, true)
		if err != nil && !errors.Is(err, ErrUnknownPartition) {
			t.Fatalf("read of a deleted topic: %v", err)
		}
		return errors.Is(err, ErrUnknownPartition)
	}, "the replica went on serving a deleted topic")
	// ...and at once after one.
	if err := rp.b.SyncTopics(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := rp.b.ReadReplica(context.Background(), rp.pb, 2, 1<<20, true); !errors.Is(err, ErrUnknownPartition) {
		t.Fatalf("read after the sync: %v, want ErrUnknownPartition", err)
	}
}

// While metadata cannot be read, a replica serves nothing (ErrStorage, a
// retriable KAFKA_STORAGE_ERROR) rather than guess the committed end, and
// retries no more than once per replicaRefreshMin; it serves again once
// metadata answers.
func TestReplicaReadMetadataDown(t *testing.T) {
	rp := newReplicaPair(t)
	rp.commit(t, 0, "a", "b")
	rp.bkv.fail.Store(true)
	before, start := rp.bkv.reads.Load(), time.Now()
	for range 20 {
		res, err := rp.b.ReadReplica(context.Background(), rp.pb, 0, 1<<20, true)
		if !errors.Is(err, ErrStorage) || res.Bytes != 0 {
			t.Fatalf("read with metadata down: %d bytes, %v; want none, ErrStorage", res.Bytes, err)
		}
	}
	if reads, bound := rp.bkv.reads.Load()-before, 1+int64(time.Since(start)/replicaRefreshMin); reads > bound {
		t.Fatalf("%d partition-state reads for 20 fetches with metadata down, want at most %d", reads, bound)
	}
	rp.bkv.fail.Store(false)
	var err error
	testwait.Until(t, 10*time.Second, func() bool {
		var res FetchResult
		res, err = rp.b.ReadReplica(context.Background(), rp.pb, 0, 1<<20, true)
		return err == nil && res.Bytes > 0
	}, "the replica never served again: %v", testwait.Later(func() string { return fmt.Sprint(err) }))
}
