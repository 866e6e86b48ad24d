package txncoord

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sediment-io/sediment/internal/testwait"
)

// TestReopenMidPrepareCommit: a coordinator stops after PrepareCommit is
// durable and before its markers are written; a coordinator opened on the
// same store (with a higher coordinator epoch) writes the commit markers
// once and stores CompleteCommit; a retried EndTxn then succeeds without
// writing markers again. An Ongoing transaction of the first keeps its
// timeout and is left open. On bbolt and on etcd.
func TestReopenMidPrepareCommit(t *testing.T) { backends(t, reopenMidPrepareCommit) }

func reopenMidPrepareCommit(t *testing.T, e *env) {
	ctx := context.Background()
	var phases []string
	cfg := e.config()
	cfg.Hook = func(p string) {
		if p == "after-prepare-commit" && e.markers.attempts() != 0 {
			t.Errorf("markers tried before the after-prepare-commit hook")
		}
		phases = append(phases, p)
	}
	a := e.openWith(cfg)
	p := initID(t, a, "tx")
	wantErr(t, "add", addParts(a, "tx", p, tp("t", 0), tp("u", 0)), nil)
	wantErr(t, "add offsets", a.AddOffsets(ctx, "tx", p.ProducerID, p.ProducerEpoch, "g"), nil)
	open := initID(t, a, "open")
	wantErr(t, "add to the open one", addParts(a, "open", open, tp("t", 1)), nil)
	e.markers.setBlocked(true)
	wantErr(t, "commit", a.EndTxn(ctx, "tx", p.ProducerID, p.ProducerEpoch, true), nil)
	testwait.Until(t, 10*time.Second, func() bool { return e.markers.attempts() > 0 }, "no marker attempt")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(phases, ","); got != "after-add-partitions,after-add-partitions,after-prepare-commit" {
		t.Fatalf("hook phases: %s", got)
	}
	wantErr(t, "end on the closed coordinator", a.EndTxn(ctx, "tx", p.ProducerID, p.ProducerEpoch, true), kerr.NotCoordinator)
	if len(e.markers.written()) != 0 {
		t.Fatalf("markers written by the first coordinator: %+v", e.markers.written())
	}

	e.markers.setBlocked(false)
	b := e.open()
	waitState(t, b, "tx", CompleteCommit)
	wantErr(t, "commit retried on the new coordinator", b.EndTxn(ctx, "tx", p.ProducerID, p.ProducerEpoch, true), nil)
	m := e.markers.written()
	if len(m) != 1 || !m[0].Commit || m[0].CoordinatorEpoch != 1 || len(m[0].Partitions) != 2 || len(m[0].Groups) != 1 {
		t.Fatalf("markers: %+v", m)
	}
	if d := describe(b, "open"); d.State != Ongoing || d.TimeoutMs != 60_000 || len(d.Partitions) != 1 {
		t.Fatalf("the open transaction after reopen: %+v", d)
	}
	wantErr(t, "the open one commits on the new coordinator", b.EndTxn(ctx, "open", open.ProducerID, open.ProducerEpoch, true), nil)
	waitState(t, b, "open", CompleteCommit)
	if n := len(e.markers.written()); n != 2 {
		t.Fatalf("%d marker writes, want 2", n)
	}
}

// TestMarkersFailThenSucceed: markers failing are retried until they are
// durable; meanwhile the transaction stays PrepareCommit and EndTxn
// answers CONCURRENT_TRANSACTIONS.
func TestMarkersFailThenSucceed(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	reg := prometheus.NewRegistry()
	cfg := e.config()
	cfg.Registry = reg
	c := e.openWith(cfg)
	p := initID(t, c, "tx")
	wantErr(t, "add", addParts(c, "tx", p, tp("t", 0)), nil)
	e.markers.failNext(3)
	e.markers.setBlocked(true) // the first attempt waits: the test sees PrepareCommit
	wantErr(t, "commit", c.EndTxn(ctx, "tx", p.ProducerID, p.ProducerEpoch, true), nil)
	if d := describe(c, "tx"); d.State != PrepareCommit {
		t.Fatalf("state while markers fail: %v", d.State)
	}
	wantErr(t, "commit while markers are written", c.EndTxn(ctx, "tx", p.ProducerID, p.ProducerEpoch, true), kerr.ConcurrentTransactions)
	wantErr(t, "abort while commit markers are written", c.EndTxn(ctx, "tx", p.ProducerID, p.ProducerEpoch, false), kerr.InvalidTxnState)
	wantErr(t, "add while markers are written", addParts(c, "tx", p, tp("t", 1)), kerr.ConcurrentTransactions)
	_, err := c.InitProducerID(ctx, InitRequest{TransactionalID: "tx", TimeoutMs: 1000, ProducerID: -1, ProducerEpoch: -1})
	wantErr(t, "init while markers are written", err, kerr.ConcurrentTransactions)
	if got := gathered(t, reg, "sediment_txn_open_transactions"); got != 1 {
		t.Fatalf("open transactions: %v", got)
	}
	// The marker writer runs on its own goroutine: lift the block only once
	// its first attempt is waiting on it, or that attempt is not counted.
	testwait.Until(t, 10*time.Second, func() bool { return e.markers.attempts() > 0 }, "no marker attempt")
	e.markers.setBlocked(false)
	waitState(t, c, "tx", CompleteCommit)
	if tries, ok := e.markers.attempts(), len(e.markers.written()); tries != 5 || ok != 1 {
		t.Fatalf("%d marker attempts, %d succeeded; want 5 and 1", tries, ok)
	}
	if got := gathered(t, reg, "sediment_txn_commits_total"); got != 1 {
		t.Fatalf("commits: %v", got)
	}
	if got := gathered(t, reg, "sediment_txn_open_transactions"); got != 0 {
		t.Fatalf("open transactions after commit: %v", got)
	}
}

// gathered returns the value of the metric name registered in reg.
func gathered(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			m := f.GetMetric()[0]
			return m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	t.Fatalf("metric %s not registered", name)
	return 0
}
