package txncoord

import (
	"context"
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func kip360(t *testing.T, c *Coordinator, id string, p InitResult) (InitResult, error) {
	t.Helper()
	return c.InitProducerID(context.Background(), InitRequest{TransactionalID: id, TimeoutMs: 60_000,
		ProducerID: p.ProducerID, ProducerEpoch: p.ProducerEpoch})
}

// TestKIP360Retry: a producer re-initialising with its current id and
// epoch gets a bump; a retry of that (its answer lost) gets the same
// answer; an older session is fenced; a new session (no ids) clears the
// retry.
func TestKIP360Retry(t *testing.T) {
	e := newEnv(t)
	c := e.open()
	p0 := initID(t, c, "tx")
	p1, err := kip360(t, c, "tx", p0)
	if err != nil || p1.ProducerID != p0.ProducerID || p1.ProducerEpoch != p0.ProducerEpoch+1 {
		t.Fatalf("bump: %+v %v", p1, err)
	}
	again, err := kip360(t, c, "tx", p0)
	if err != nil || again != p1 {
		t.Fatalf("retry of the bump: %+v %v, want %+v", again, err, p1)
	}
	p2, err := kip360(t, c, "tx", p1)
	if err != nil || p2.ProducerEpoch != p1.ProducerEpoch+1 {
		t.Fatalf("second bump: %+v %v", p2, err)
	}
	_, err = kip360(t, c, "tx", p0)
	wantErr(t, "an epoch two sessions old", err, kerr.ProducerFenced)
	_, err = kip360(t, c, "tx", InitResult{ProducerID: 4242, ProducerEpoch: p2.ProducerEpoch})
	wantErr(t, "another producer id", err, kerr.ProducerFenced)
	p3 := initID(t, c, "tx")
	_, err = kip360(t, c, "tx", p2)
	wantErr(t, "retry after a new session", err, kerr.ProducerFenced)
	fresh, err := kip360(t, c, "new", InitResult{ProducerID: 77, ProducerEpoch: 3})
	if err != nil || fresh.ProducerEpoch != 0 || fresh.ProducerID == p3.ProducerID {
		t.Fatalf("KIP-360 init of an unknown id: %+v %v", fresh, err)
	}
}

// TestEpochExhaustion: an idle id whose epoch is exhausted gets a new
// producer id at epoch 0, and a KIP-360 retry of that gets the same.
func TestEpochExhaustion(t *testing.T) {
	e := newEnv(t)
	c := e.open()
	p := initID(t, c, "tx")
	tx, _ := c.enter("tx")
	tt, _ := tx.lockTxn("tx", false)
	r := tt.rec
	r.epoch = math.MaxInt16 - 1
	wantErr(t, "set the epoch", c.storeLocked(tt, r), nil)
	tt.mu.Unlock()
	tx.wg.Done()
	old := InitResult{ProducerID: p.ProducerID, ProducerEpoch: math.MaxInt16 - 1}
	n, err := kip360(t, c, "tx", old)
	if err != nil || n.ProducerID == p.ProducerID || n.ProducerEpoch != 0 {
		t.Fatalf("rotation: %+v %v", n, err)
	}
	again, err := kip360(t, c, "tx", old)
	if err != nil || again != n {
		t.Fatalf("retry of the rotation: %+v %v, want %+v", again, err, n)
	}
	if next := initID(t, c, "tx"); next.ProducerID != n.ProducerID || next.ProducerEpoch != 1 {
		t.Fatalf("init after rotation: %+v", next)
	}
}

// TestZombieFenced: a second session of the same transactional id fences
// the first one's open transaction: it is aborted with the bumped epoch
// (the new session is answered CONCURRENT_TRANSACTIONS until then), and
// the old session can neither add, end, verify nor re-initialise.
func TestZombieFenced(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	c := e.open()
	zombie := initID(t, c, "tx")
	wantErr(t, "zombie adds", addParts(c, "tx", zombie, tp("t", 0), tp("t", 1)), nil)
	e.markers.setBlocked(true)
	_, err := c.InitProducerID(ctx, InitRequest{TransactionalID: "tx", TimeoutMs: 1000, ProducerID: -1, ProducerEpoch: -1})
	wantErr(t, "new session while the zombie's transaction is open", err, kerr.ConcurrentTransactions)
	_, err = c.InitProducerID(ctx, InitRequest{TransactionalID: "tx", TimeoutMs: 1000, ProducerID: -1, ProducerEpoch: -1})
	wantErr(t, "new session while the abort runs", err, kerr.ConcurrentTransactions)
	wantErr(t, "zombie adds after the fence", addParts(c, "tx", zombie, tp("t", 2)), kerr.ProducerFenced)
	wantErr(t, "zombie commits after the fence", c.EndTxn(ctx, "tx", zombie.ProducerID, zombie.ProducerEpoch, true), kerr.ProducerFenced)
	wantErr(t, "zombie's produce verified", c.Verify(ctx, "tx", zombie.ProducerID, zombie.ProducerEpoch, tp("t", 0)), kerr.ProducerFenced)
	e.markers.setBlocked(false)
	waitState(t, c, "tx", CompleteAbort)
	m := e.markers.written()
	if len(m) != 1 || m[0].Commit || m[0].ProducerEpoch != zombie.ProducerEpoch+1 || len(m[0].Partitions) != 2 {
		t.Fatalf("abort markers: %+v", m)
	}
	fresh := initID(t, c, "tx")
	if fresh.ProducerID != zombie.ProducerID || fresh.ProducerEpoch != zombie.ProducerEpoch+2 {
		t.Fatalf("new session: %+v, zombie %+v", fresh, zombie)
	}
	_, err = kip360(t, c, "tx", zombie)
	wantErr(t, "zombie re-initialises with its epoch", err, kerr.ProducerFenced)
	_, err = kip360(t, c, "tx", InitResult{ProducerID: zombie.ProducerID, ProducerEpoch: zombie.ProducerEpoch + 1})
	wantErr(t, "the fencing epoch, never given to a producer", err, kerr.ProducerFenced)
	wantErr(t, "new session adds", addParts(c, "tx", fresh, tp("t", 0)), nil)
}
