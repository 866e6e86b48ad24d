package txncoord

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sediment-io/sediment/metadata"
)

// TestManyProducersAtOnce: many producers' transitions at once, written in
// shared metadata transactions, each commit complete and its markers
// written once.
func TestManyProducersAtOnce(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	c := e.open()
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("tx-%d", i)
			p, err := c.InitProducerID(ctx, InitRequest{TransactionalID: id, TimeoutMs: 60_000, ProducerID: -1, ProducerEpoch: -1})
			if err == nil {
				err = addParts(c, id, p, tp("t", int32(i%3)))
			}
			if err == nil {
				err = c.EndTxn(ctx, id, p.ProducerID, p.ProducerEpoch, true)
			}
			if err != nil {
				errs <- fmt.Errorf("%s: %w", id, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range n {
		waitState(t, c, fmt.Sprintf("tx-%d", i), CompleteCommit)
	}
	seen := map[string]bool{}
	for _, m := range e.markers.written() {
		if seen[m.TransactionalID] || !m.Commit {
			t.Fatalf("markers: %+v", m)
		}
		seen[m.TransactionalID] = true
	}
	if len(seen) != n {
		t.Fatalf("%d transactions got markers, want %d", len(seen), n)
	}
}

// TestLostCompareAndSwapRereads: a record changed in metadata behind the
// coordinator's back (as after a write whose outcome was in doubt) makes
// its next write fail with COORDINATOR_NOT_AVAILABLE; the coordinator
// reads the record back, resumes its PrepareCommit, and answers from it
// from then on.
func TestLostCompareAndSwapRereads(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	c := e.open()
	p := initID(t, c, "tx")
	wantErr(t, "add", addParts(c, "tx", p, tp("t", 0)), nil)
	st, ok, err := e.meta.ReadTxn(ctx, "tx")
	if err != nil || !ok {
		t.Fatalf("read: %v %v", ok, err)
	}
	st.Record.State = PrepareCommit.String()
	c.mu.Lock()
	fence := c.shards[ShardOf("tx")].fence
	c.mu.Unlock()
	if _, err := e.meta.WriteTxn(ctx, fence, "tx", st.Version, &st.Record); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "add after the record changed", addParts(c, "tx", p, tp("t", 1)), kerr.CoordinatorNotAvailable)
	waitState(t, c, "tx", CompleteCommit)
	wantErr(t, "commit retried", c.EndTxn(ctx, "tx", p.ProducerID, p.ProducerEpoch, true), nil)
	if m := e.markers.written(); len(m) != 1 || len(m[0].Partitions) != 1 || m[0].Partitions[0] != tp("t", 0) {
		t.Fatalf("markers: %+v", m)
	}
}

// TestTxnSize: a transaction holds at most maxTxnWrites changes and about
// maxTxnBytes, and a larger change goes alone.
func TestTxnSize(t *testing.T) {
	small := &writeReq{w: metadata.TxnWrite{ID: "a"}}
	big := &writeReq{w: metadata.TxnWrite{ID: "b", Record: &metadata.TxnRecord{}}}
	for range 30_000 {
		big.w.Record.Partitions = append(big.w.Record.Partitions, metadata.TxnPartition{Topic: "topic", Partition: 1})
	}
	many := make([]*writeReq, 100)
	for i := range many {
		many[i] = small
	}
	for _, tc := range []struct {
		batch []*writeReq
		want  int
	}{
		{many, maxTxnWrites},
		{[]*writeReq{big, small}, 1},
		{[]*writeReq{small, big, small}, 1},
		{[]*writeReq{small, small}, 2},
	} {
		if got := txnSize(tc.batch); got != tc.want {
			t.Fatalf("txnSize of %d changes: %d, want %d", len(tc.batch), got, tc.want)
		}
	}
}
