package txncoord

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
)

// TestTimeoutAbort: an Ongoing transaction past its timeout is fenced
// (epoch bump) and aborted by the sweep; one within its timeout is not;
// the producer's later calls are PRODUCER_FENCED.
func TestTimeoutAbort(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	reg := prometheus.NewRegistry()
	cfg := e.config()
	cfg.Registry = reg
	c := e.openWith(cfg)
	p, err := c.InitProducerID(ctx, InitRequest{TransactionalID: "slow", TimeoutMs: 1000, ProducerID: -1, ProducerEpoch: -1})
	wantErr(t, "init", err, nil)
	wantErr(t, "add", addParts(c, "slow", p, tp("t", 0)), nil)
	q := initID(t, c, "fast") // 60 s timeout
	wantErr(t, "add", addParts(c, "fast", q, tp("t", 1)), nil)

	e.clock.Advance(time.Second)
	c.abortTimedOut()
	if d := describe(c, "slow"); d.State != Ongoing {
		t.Fatalf("aborted at its timeout, not past it: %v", d.State)
	}
	e.clock.Advance(time.Millisecond)
	c.abortTimedOut()
	waitState(t, c, "slow", CompleteAbort)
	if d := describe(c, "fast"); d.State != Ongoing {
		t.Fatalf("the other transaction: %v", d.State)
	}
	m := e.markers.written()
	if len(m) != 1 || m[0].Commit || m[0].ProducerEpoch != p.ProducerEpoch+1 || m[0].Partitions[0] != tp("t", 0) {
		t.Fatalf("markers: %+v", m)
	}
	wantErr(t, "commit after the timeout", c.EndTxn(ctx, "slow", p.ProducerID, p.ProducerEpoch, true), kerr.ProducerFenced)
	wantErr(t, "add after the timeout", addParts(c, "slow", p, tp("t", 0)), kerr.ProducerFenced)
	if got := gathered(t, reg, "sediment_txn_timed_out_aborts_total"); got != 1 {
		t.Fatalf("timed-out aborts: %v", got)
	}
	if got := gathered(t, reg, "sediment_txn_aborts_total"); got != 1 {
		t.Fatalf("aborts: %v", got)
	}
	if next := initID(t, c, "slow"); next.ProducerEpoch != p.ProducerEpoch+2 {
		t.Fatalf("init after the timeout: %+v", next)
	}
}

// TestTimeoutSweepRuns: the sweep loop itself runs every
// AbortSweepInterval.
func TestTimeoutSweepRuns(t *testing.T) {
	e := newEnv(t)
	cfg := e.config()
	cfg.AbortSweepInterval = 10 * time.Millisecond
	c := e.openWith(cfg)
	p, err := c.InitProducerID(context.Background(), InitRequest{TransactionalID: "tx", TimeoutMs: 1000, ProducerID: -1, ProducerEpoch: -1})
	wantErr(t, "init", err, nil)
	wantErr(t, "add", addParts(c, "tx", p, tp("t", 0)), nil)
	e.clock.Advance(2 * time.Second)
	waitState(t, c, "tx", CompleteAbort)
}

// TestExpiration: ids idle longer than IDExpiration are deleted, and stay
// deleted after a reopen; open and recently used ones are kept. An
// expired id starts again with a new producer id. On bbolt and on etcd.
func TestExpiration(t *testing.T) { backends(t, expiration) }

func expiration(t *testing.T, e *env) {
	ctx := context.Background()
	cfg := e.config()
	cfg.IDExpiration = time.Hour
	c := e.openWith(cfg)
	idle := initID(t, c, "idle")
	committed := initID(t, c, "committed")
	wantErr(t, "add", addParts(c, "committed", committed, tp("t", 0)), nil)
	wantErr(t, "commit", c.EndTxn(ctx, "committed", committed.ProducerID, committed.ProducerEpoch, true), nil)
	waitState(t, c, "committed", CompleteCommit)
	open := initID(t, c, "open")
	wantErr(t, "add", addParts(c, "open", open, tp("t", 1)), nil)
	e.clock.Advance(30 * time.Minute)
	recent := initID(t, c, "recent")
	e.clock.Advance(30 * time.Minute)
	c.expireIDs()
	for _, id := range []string{"idle", "committed"} {
		wantErr(t, "describe "+id, describe(c, id).Err, kerr.TransactionalIDNotFound)
	}
	for _, id := range []string{"open", "recent"} {
		wantErr(t, "describe "+id, describe(c, id).Err, nil)
	}
	wantErr(t, "add with the expired producer", addParts(c, "idle", idle, tp("t", 0)), kerr.InvalidProducerIDMapping)
	c.Close()
	c2 := e.openWith(cfg)
	got := c2.List(ListFilter{})
	if len(got) != 2 || got[0].TransactionalID != "open" || got[1].TransactionalID != "recent" || got[1].ProducerID != recent.ProducerID {
		t.Fatalf("after reopen: %+v", got)
	}
	if again := initID(t, c2, "idle"); again.ProducerID == idle.ProducerID || again.ProducerEpoch != 0 {
		t.Fatalf("expired id initialised again: %+v (was %+v)", again, idle)
	}
}

// TestList: the state, producer id and duration filters.
func TestList(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	c := e.open()
	a := initID(t, c, "a")
	wantErr(t, "add a", addParts(c, "a", a, tp("t", 0)), nil)
	e.clock.Advance(time.Minute)
	b := initID(t, c, "b")
	wantErr(t, "add b", c.AddOffsets(ctx, "b", b.ProducerID, b.ProducerEpoch, "g"), nil)
	initID(t, c, "c")
	ids := func(ls []Listing) []string {
		var out []string
		for _, l := range ls {
			out = append(out, l.TransactionalID)
		}
		return out
	}
	for _, tc := range []struct {
		f    ListFilter
		want []string
	}{
		{ListFilter{}, []string{"a", "b", "c"}},
		{ListFilter{States: []State{Ongoing}}, []string{"a", "b"}},
		{ListFilter{States: []State{Empty, CompleteAbort}}, []string{"c"}},
		{ListFilter{ProducerIDs: []int64{b.ProducerID, 99}}, []string{"b"}},
		{ListFilter{States: []State{Ongoing}, MinDurationMs: 30_000}, []string{"a"}},
		{ListFilter{MinDurationMs: -1, ProducerIDs: []int64{a.ProducerID}}, []string{"a"}},
	} {
		if got := ids(c.List(tc.f)); !slices.Equal(got, tc.want) {
			t.Fatalf("list %+v: %v, want %v", tc.f, got, tc.want)
		}
	}
	d := describe(c, "b")
	if d.State != Ongoing || len(d.Partitions) != 1 || d.Partitions[0] != tp("__consumer_offsets", ShardOf("g")) {
		t.Fatalf("describe b: %+v", d)
	}
}

// TestParseState: every state's name parses back to it.
func TestParseState(t *testing.T) {
	for s := Empty; s <= Dead; s++ {
		if got, ok := ParseState(s.String()); !ok || got != s {
			t.Fatalf("%v: %v %v", s, got, ok)
		}
	}
	if _, ok := ParseState("ongoing"); ok {
		t.Fatal("lower-case name parsed")
	}
}
