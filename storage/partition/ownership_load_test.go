package partition

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sediment-io/sediment/internal/testwait"
)

// TestOwnershipMovesUnderLoad moves one partition back and forth between
// two brokers while an idempotent producer writes to whichever owns it,
// retrying a batch on the other broker when told ErrNotLeader (as a Kafka
// client does after a metadata refresh). Hand-overs are graceful
// (Release, then Acquire) and, under object durability, also forced: the
// owner key is taken while the old owner's batches are in flight, and the
// old owner is dropped after. Every acknowledged batch must be read back
// once, at the offset its acknowledgement gave, in a contiguous log.
func TestOwnershipMovesUnderLoad(t *testing.T) {
	for _, d := range []Durability{DurabilityWAL, DurabilityObject} {
		t.Run(durabilityName(d), func(t *testing.T) { runOwnershipMoves(t, newCluster(t), d, d == DurabilityObject) })
	}
	t.Run("object-etcd", func(t *testing.T) { runOwnershipMoves(t, newEtcdCluster(t), DurabilityObject, true) })
}

func durabilityName(d Durability) string {
	if d == DurabilityObject {
		return "object"
	}
	return "wal"
}

type movingBroker struct {
	l   *Log
	own *fakeOwnership
	p   *Partition
}

func runOwnershipMoves(t *testing.T, c *cluster, d Durability, forced bool) {
	edit := func(o *Options) { o.Durability, o.UploadInterval = d, 2*time.Millisecond }
	eA, ownA := c.broker(1, edit)
	eB, ownB := c.broker(2, edit)
	a := eA.open()
	tp := createTopic(t, a, "t", 1, nil)
	b := eB.open()
	if err := b.SyncTopics(context.Background()); err != nil {
		t.Fatal(err)
	}
	tb, _ := b.TopicByID(tp.ID)
	brokers := []movingBroker{{a, ownA, tp.Partition(0)}, {b, ownB, tb.Partition(0)}}
	acquire(t, a, ownA, brokers[0].p)
	var owner atomic.Int32 // index of the broker the producer tries first

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stop := make(chan struct{})
	var acked sync.Map // value -> offset
	var produced atomic.Int64
	prodErr := make(chan error, 1)
	go func() { prodErr <- produceMoving(ctx, brokers, &owner, stop, &acked, &produced) }()

	const moves = 8
	for i := range moves {
		waitProduced(t, &produced, int64(i+1)*5)
		from, to := brokers[i%2], brokers[(i+1)%2]
		if forced && i%2 == 1 {
			to.own.take(t, to.p.topic.ID, 0) // the key moves under the old owner's uploads
			if err := to.l.Acquire(ctx, to.p.topic.ID, 0); err != nil {
				t.Fatalf("move %d: acquire: %v", i, err)
			}
			from.own.lose(from.p.topic.ID, 0)
			from.l.Drop(from.p.topic.ID, 0)
		} else {
			if err := from.l.Release(ctx, from.p.topic.ID, 0); err != nil {
				t.Fatalf("move %d: release: %v", i, err)
			}
			from.own.lose(from.p.topic.ID, 0)
			acquire(t, to.l, to.own, to.p)
		}
		owner.Store(int32((i + 1) % 2))
	}
	waitProduced(t, &produced, (moves+1)*5)
	close(stop)
	if err := <-prodErr; err != nil {
		t.Fatal(err)
	}
	last := brokers[moves%2]
	ctxU, cancelU := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelU()
	if err := last.l.Release(ctxU, last.p.topic.ID, 0); err != nil { // everything committed
		t.Fatal(err)
	}
	acquire(t, last.l, last.own, last.p)
	got := readAll(t, last.l, last.p, 0)
	checkMovedLog(t, got, &acked, produced.Load())
}

// produceMoving sends batches of one record, sequence by sequence, to the
// broker owner names, and on ErrNotLeader retries the same batch on the
// other one until it is acknowledged.
func produceMoving(ctx context.Context, brokers []movingBroker, owner *atomic.Int32, stop chan struct{},
	acked *sync.Map, produced *atomic.Int64) error {
	for seq := int32(0); ; seq++ {
		select {
		case <-stop:
			return nil
		default:
		}
		v := fmt.Sprintf("v%04d", seq)
		off, err := produceRetrying(ctx, brokers, owner, idem(seq, v))
		if err != nil {
			return fmt.Errorf("sequence %d: %w", seq, err)
		}
		acked.Store(v, off)
		produced.Add(1)
	}
}

func produceRetrying(ctx context.Context, brokers []movingBroker, owner *atomic.Int32, tb testBatch) (int64, error) {
	i := owner.Load()
	for ctx.Err() == nil {
		br := brokers[i]
		res, err := br.l.Append(ctx, br.p, tb.encode())
		if err == nil {
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err = br.l.Wait(wctx, res)
			cancel()
			if err == nil {
				return res.BaseOffset, nil
			}
		}
		if !errors.Is(err, ErrNotLeader) && !errors.Is(err, ErrStorage) {
			return 0, err
		}
		i = 1 - i
		if i == owner.Load() {
			time.Sleep(time.Millisecond) // both refused: a move is under way
		}
	}
	return 0, ctx.Err()
}

func waitProduced(t *testing.T, produced *atomic.Int64, n int64) {
	t.Helper()
	testwait.Until(t, 30*time.Second, func() bool { return produced.Load() >= n }, "only %v of %d batches acknowledged",
		testwait.Later(func() string { return fmt.Sprint(produced.Load()) }), n)
}

// checkMovedLog checks that the log holds every acknowledged value once,
// at its acknowledged offset, and nothing else, contiguously from 0.
func checkMovedLog(t *testing.T, got map[int64][]byte, acked *sync.Map, n int64) {
	t.Helper()
	if int64(len(got)) != n {
		t.Fatalf("log holds %d records, %d were acknowledged", len(got), n)
	}
	seen := map[string]bool{}
	for off := range int64(len(got)) {
		v, ok := got[off]
		if !ok {
			t.Fatalf("offset %d missing: the log is not contiguous", off)
		}
		if seen[string(v)] {
			t.Fatalf("value %s twice", v)
		}
		seen[string(v)] = true
	}
	acked.Range(func(k, off any) bool {
		if string(got[off.(int64)]) != k.(string) {
			t.Errorf("acknowledged %s at %d, the log holds %q there", k, off, got[off.(int64)])
		}
		return true
	})
}
