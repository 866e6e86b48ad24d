package groupcoord

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sediment-io/sediment/internal/testwait"
	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

// txnCommit commits offsets of partitions 0.. of "t" inside producer pid's
// transaction (epoch 0), as member m (joined{"", -1}: the old versions
// without generation and member).
func txnCommit(c *Coordinator, group string, m joined, pid int64, offsets ...int64) <-chan CommitResult {
	return txnCommitEpoch(c, group, m, pid, 0, offsets...)
}

func txnCommitEpoch(c *Coordinator, group string, m joined, pid int64, epoch int16, offsets ...int64) <-chan CommitResult {
	req := TxnCommitRequest{CommitRequest: CommitRequest{Group: group, MemberID: m.id, Generation: m.gen},
		TransactionalID: fmt.Sprintf("txn-%d", pid), ProducerID: pid, ProducerEpoch: epoch}
	for p, o := range offsets {
		if o >= 0 {
			req.Offsets = append(req.Offsets, CommitOffset{Topic: "t", Partition: int32(p), Offset: o, LeaderEpoch: 2})
		}
	}
	return c.TxnCommit(req)
}

// mustTxnCommit commits inside a transaction and fails the test unless
// every partition is durable.
func (e *env) mustTxnCommit(group string, m joined, pid int64, offsets ...int64) {
	e.t.Helper()
	res := recv(e.t, txnCommit(e.c, group, m, pid, offsets...))
	if res.Err != nil {
		e.t.Fatalf("txn commit: %v", res.Err)
	}
	for p, err := range res.Partitions {
		if err != nil {
			e.t.Fatalf("txn commit, partition %d: %v", p, err)
		}
	}
}

// stable fetches partitions 0-3 of "t" with require_stable: "u" for a
// partition whose offset is pending in a transaction, else its offset.
func (e *env) stable(group string) string {
	e.t.Helper()
	res := recv(e.t, e.c.FetchOffsets(FetchRequest{Group: group, RequireStable: true,
		Topics: []FetchTopic{{Topic: "t", Partitions: []int32{0, 1, 2, 3}}}}))
	if res.Err != nil {
		e.t.Fatalf("stable fetch: %v", res.Err)
	}
	var out []string
	for _, p := range res.Topics[0].Partitions {
		switch {
		case errors.Is(p.Err, kerr.UnstableOffsetCommit) && p.Offset == -1:
			out = append(out, "u")
		case p.Err != nil:
			e.t.Fatalf("stable fetch, partition %d: %v", p.Partition, p.Err)
		default:
			out = append(out, fmt.Sprint(p.Offset))
		}
	}
	return strings.Join(out, ",")
}

func (e *env) complete(pid int64, epoch int16, commit bool, group string) {
	e.t.Helper()
	if err := e.c.CompleteTxn(context.Background(), ShardOf(group), pid, epoch, commit); err != nil {
		e.t.Fatalf("complete txn of %d (commit %v): %v", pid, commit, err)
	}
}

// TestTxnCommitThenCommit: offsets committed in a transaction are not
// served until it commits (require_stable answers UNSTABLE_OFFSET_COMMIT
// for their partitions only), then are the group's offsets; a repeated
// completion changes nothing.
func TestTxnCommitThenCommit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ms := e.stableGroup("g", 1)
	e.commit("g", ms[0], nil, 5, 6)
	e.mustTxnCommit("g", ms[0], 7, 10, -1, 12)
	e.mustTxnCommit("g", ms[0], 7, 11) // replaces its pending offset of partition 0
	if got := fmtOffsets(e.fetched("g")); got != "5,6,-1,-1" {
		t.Fatalf("offsets with a transaction open: %s", got)
	}
	if got := e.stable("g"); got != "u,6,u,-1" {
		t.Fatalf("require_stable with a transaction open: %s", got)
	}
	all := recv(t, e.c.FetchOffsets(FetchRequest{Group: "g", RequireStable: true}))
	if all.Err != nil || len(all.Topics) != 1 || len(all.Topics[0].Partitions) != 2 ||
		!errors.Is(all.Topics[0].Partitions[0].Err, kerr.UnstableOffsetCommit) || all.Topics[0].Partitions[1].Offset != 6 {
		t.Fatalf("require_stable for every partition: %+v", all)
	}
	e.complete(7, 0, true, "g")
	if got := e.stable("g"); got != "11,6,12,-1" {
		t.Fatalf("after the commit: %s", got)
	}
	e.complete(7, 0, true, "g")
	e.complete(7, 0, false, "g")
	if got := e.stable("g"); got != "11,6,12,-1" {
		t.Fatalf("after repeated completions: %s", got)
	}
	var counted dto.Metric
	if err := e.c.m.txnsCompleted.WithLabelValues("commit").Write(&counted); err != nil || counted.GetCounter().GetValue() != 1 {
		t.Fatalf("%v completions counted (%v), want 1", counted.GetCounter().GetValue(), err)
	}
	e.restart()
	if got := e.stable("g"); got != "11,6,12,-1" {
		t.Fatalf("after a restart: %s", got)
	}
}

// TestTxnCommitThenAbort: an abort drops the transaction's offsets, and
// only its producer's; the committed offsets stay.
func TestTxnCommitThenAbort(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	standalone := joined{"", -1}
	e.commit("g", standalone, nil, 5)
	e.mustTxnCommit("g", standalone, 7, 10, 11)
	e.mustTxnCommit("g", standalone, 8, -1, -1, 12)
	e.complete(7, 0, false, "g")
	if got := e.stable("g"); got != "5,-1,u,-1" {
		t.Fatalf("after aborting producer 7: %s", got)
	}
	e.complete(8, 0, true, "g")
	if got := e.stable("g"); got != "5,-1,12,-1" {
		t.Fatalf("after committing producer 8: %s", got)
	}
	e.restart()
	if got := e.stable("g"); got != "5,-1,12,-1" {
		t.Fatalf("after a restart: %s", got)
	}
}

// TestTxnCommitChecks: a transactional commit is checked as Kafka checks
// one (validateOffsetCommit with isTransactional): the errors of an
// OffsetCommit for a stale generation, an unknown member or a fenced
// instance; no check for the old versions without generation and member,
// nor of the group's state during a rebalance. A refused commit leaves
// nothing pending.
func TestTxnCommitChecks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ms := e.stableGroup("g", 1)
	m := ms[0]
	cases := []struct {
		name string
		req  TxnCommitRequest
		want error
	}{
		{"stale generation", TxnCommitRequest{CommitRequest: CommitRequest{MemberID: m.id, Generation: m.gen - 1}}, ErrIllegalGeneration},
		{"unknown member", TxnCommitRequest{CommitRequest: CommitRequest{MemberID: "nobody", Generation: m.gen}}, ErrUnknownMember},
		{"member without generation", TxnCommitRequest{CommitRequest: CommitRequest{MemberID: m.id, Generation: -1}}, ErrIllegalGeneration},
		{"unknown member without generation", TxnCommitRequest{CommitRequest: CommitRequest{MemberID: "nobody", Generation: -1}}, ErrUnknownMember},
	}
	for _, tc := range cases {
		tc.req.Group, tc.req.ProducerID = "g", 7
		tc.req.Offsets = []CommitOffset{{Topic: "t", Offset: 1}}
		wantErr(t, tc.name, recv(t, e.c.TxnCommit(tc.req)).Err, tc.want)
	}
	stale := recv(t, e.c.TxnCommit(TxnCommitRequest{CommitRequest: CommitRequest{Group: "nogroup", MemberID: m.id, Generation: 1,
		Offsets: []CommitOffset{{Topic: "t", Offset: 1}}}, ProducerID: 7}))
	wantErr(t, "generation for a group that does not exist", stale.Err, ErrIllegalGeneration)
	if got := e.stable("g"); got != "-1,-1,-1,-1" {
		t.Fatalf("refused commits left %s", got)
	}

	res := recv(t, txnCommit(e.c, "g", joined{"", -1}, 7, 3))
	if res.Err != nil || res.Partitions[0] != nil {
		t.Fatalf("a commit of the old versions (no generation, no member) to a stable group: %+v", res)
	}
	bad := recv(t, e.c.TxnCommit(TxnCommitRequest{CommitRequest: CommitRequest{Group: "g", MemberID: m.id, Generation: m.gen,
		Offsets: []CommitOffset{{Topic: "t", Partition: 9}, {Topic: "gone"}}}, ProducerID: 7}))
	if bad.Err != nil || bad.Partitions[0] != ErrUnknownTopicOrPartition || bad.Partitions[1] != ErrUnknownTopicOrPartition {
		t.Fatalf("unknown partitions: %+v", bad)
	}

	// A second member joins: the group rebalances, and m's transactional
	// commit of its generation is taken after the join completes.
	second := e.c.Join(join("g", ""))
	rejoin := mustJoin(t, recv(t, e.c.Join(join("g", m.id))))
	mustJoin(t, recv(t, second))
	if e.state("g") != StateCompletingRebalance {
		t.Fatalf("state %v, want CompletingRebalance", e.state("g"))
	}
	res = recv(t, txnCommit(e.c, "g", rejoin, 7, 4))
	if res.Err != nil || res.Partitions[0] != nil {
		t.Fatalf("a member's commit during CompletingRebalance: %+v", res)
	}
}

// TestTxnCommitZombie: once a producer's transaction completed with a
// newer epoch (the coordinator fenced it), a commit of its older epoch is
// refused with PRODUCER_FENCED and leaves nothing pending; a marker older
// than the pending offsets is refused too.
func TestTxnCommitZombie(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	standalone := joined{"", -1}
	if res := recv(t, txnCommitEpoch(e.c, "g", standalone, 7, 3, 10)); res.Err != nil {
		t.Fatal(res.Err)
	}
	err := e.c.CompleteTxn(context.Background(), ShardOf("g"), 7, 2, false)
	if !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("a marker older than the pending offsets: %v", err)
	}
	wantFenced := func(what string, epoch int16) {
		t.Helper()
		res := recv(t, txnCommitEpoch(e.c, "g", standalone, 7, epoch, 11))
		if !errors.Is(res.Err, kerr.ProducerFenced) {
			t.Fatalf("%s: %+v", what, res)
		}
	}
	wantFenced("older epoch than the pending offsets", 2)
	e.complete(7, 4, false, "g") // the fence: abort with the bumped epoch
	wantFenced("older epoch than the completed transaction", 3)
	if got := e.stable("g"); got != "-1,-1,-1,-1" {
		t.Fatalf("after the zombie's commit: %s", got)
	}
	if res := recv(t, txnCommitEpoch(e.c, "g", standalone, 7, 4, 12)); res.Err != nil {
		t.Fatalf("the new epoch's commit: %+v", res)
	}
}

// TestTxnOffsetsSurviveKill: pending offsets are durable once TxnCommit
// answers: a coordinator opened on the same store while the first still
// runs (as after a SIGKILL) serves them as pending, and commits or aborts
// them. On bbolt and on a real etcd.
func TestTxnOffsetsSurviveKill(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"bbolt", "etcd"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			var e *env
			if backend == "etcd" {
				endpoint, _ := etcdtest.Start(t)
				e = newEnvOn(t, metadata.NewStore(etcdtest.OpenKV(t, endpoint, "sediment")), 1)
				e.cluster.setTopic("t", 4)
			} else {
				e = newEnv(t)
			}
			checkSurviveKill(t, e)
		})
	}
}

func checkSurviveKill(t *testing.T, e *env) {
	ms := e.stableGroup("g", 1)
	e.commit("g", ms[0], nil, 1, 2, 3)
	e.mustTxnCommit("g", ms[0], 7, 10, 20)
	e.mustTxnCommit("g", ms[0], 8, -1, -1, 30)
	e.open() // the first coordinator is never closed: the claim fences it
	if got := e.stable("g"); got != "u,u,u,-1" {
		t.Fatalf("after the kill: %s", got)
	}
	if got := fmtOffsets(e.fetched("g")); got != "1,2,3,-1" {
		t.Fatalf("committed offsets after the kill: %s", got)
	}
	e.complete(7, 0, true, "g")
	e.complete(8, 0, false, "g")
	if got := e.stable("g"); got != "10,20,3,-1" {
		t.Fatalf("after completing both: %s", got)
	}
	e.open()
	if got := e.stable("g"); got != "10,20,3,-1" {
		t.Fatalf("after a second kill: %s", got)
	}
	stored, err := e.meta.LoadGroups(context.Background())
	if err != nil || len(stored) != 1 || len(stored[0].TxnOffsets) != 0 {
		t.Fatalf("stored: %+v, %v", stored, err)
	}
}

// TestTxnOffsetsProtectGroup: a group with offsets pending in a
// transaction is not deleted (GROUP_NOT_EMPTY) nor removed by the expiry,
// and a committed offset of a partition with a pending one does not
// expire; once the transaction ends they do.
func TestTxnOffsetsProtectGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "offsets.retention.minutes", "1")
	standalone := joined{"", -1}
	e.commit("g", standalone, nil, 5, 6)
	e.mustTxnCommit("g", standalone, 7, 10)
	e.mustTxnCommit("only-pending", standalone, 7, -1, 1)
	errs := recv(t, e.c.DeleteGroups([]string{"g", "only-pending"}))
	wantErr(t, "delete g", errs[0], ErrNonEmptyGroup)
	wantErr(t, "delete only-pending", errs[1], ErrNonEmptyGroup)
	e.clock.Advance(2 * time.Minute)
	e.c.cleanup()
	if got := e.stable("g"); got != "u,-1,-1,-1" {
		t.Fatalf("g after the expiry: %s", got)
	}
	if got := fmtOffsets(e.fetched("g")); got != "5,-1,-1,-1" {
		t.Fatalf("g's committed offsets after the expiry: %s", got)
	}
	if got := e.stable("only-pending"); got != "-1,u,-1,-1" {
		t.Fatalf("only-pending after the expiry: %s", got)
	}
	e.complete(7, 0, false, "g")
	if ShardOf("only-pending") != ShardOf("g") {
		e.complete(7, 0, false, "only-pending")
	}
	errs = recv(t, e.c.DeleteGroups([]string{"only-pending"}))
	wantErr(t, "delete only-pending after the abort", errs[0], nil)
	e.c.cleanup()
	if d := e.c.Describe("g"); d.Err != ErrGroupNotFound {
		t.Fatalf("g after the abort and an expiry: %+v", d)
	}
}

// TestCompleteTxnNotCoordinator: only the owner of a shard completes its
// transactions.
func TestCompleteTxnNotCoordinator(t *testing.T) {
	t.Parallel()
	ce := newClusterEnv(t, nil)
	a := ce.openNode(1)
	shard := ShardOf("g")
	err := a.c.CompleteTxn(context.Background(), shard, 7, 0, true)
	wantErr(t, "a shard not owned", err, ErrNotCoordinator)
	ce.take(a, shard)
	wantErr(t, "an owned shard without pending offsets", a.c.CompleteTxn(context.Background(), shard, 7, 0, true), nil)
}

// TestTxnOffsetsShardMove: a new owner of the shard loads the pending
// offsets and completes the transaction; the old owner can complete it no
// more. On bbolt and on a real etcd.
func TestTxnOffsetsShardMove(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"bbolt", "etcd"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			var ce *clusterEnv
			var metaB *metadata.Store
			if backend == "etcd" {
				endpoint, _ := etcdtest.Start(t)
				ce = newClusterEnv(t, etcdtest.OpenKV(t, endpoint, "sediment"))
				metaB = metadata.NewStore(etcdtest.OpenKV(t, endpoint, "sediment"))
				t.Cleanup(func() { metaB.Close() })
			} else {
				bolt, err := metadata.OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
				if err != nil {
					t.Fatal(err)
				}
				ce = newClusterEnv(t, bolt)
				metaB = ce.meta
			}
			a, b := ce.openNode(1), ce.openNodeOn(2, metaB)
			shard := ShardOf("g")
			ce.take(a, shard)
			ms := ce.on(a).stableGroup("g", 1)
			ce.commit("g", ms[0], nil, 1, 2)
			ce.mustTxnCommit("g", ms[0], 7, 10, 20)
			ce.mustTxnCommit("g", ms[0], 8, -1, -1, 30)

			ce.take(b, shard)
			wantErr(t, "the old owner", a.c.CompleteTxn(context.Background(), shard, 7, 0, true), ErrNotCoordinator)
			ce.on(b)
			if got := ce.stable("g"); got != "u,u,u,-1" {
				t.Fatalf("on the new owner: %s", got)
			}
			ce.complete(7, 0, true, "g")
			if got := ce.stable("g"); got != "10,20,u,-1" {
				t.Fatalf("after committing producer 7 on the new owner: %s", got)
			}
			ce.take(a, shard)
			ce.on(a).complete(8, 0, true, "g")
			if got := ce.stable("g"); got != "10,20,30,-1" {
				t.Fatalf("after committing producer 8 back on the first owner: %s", got)
			}
		})
	}
}

// TestTxnCommitOfManyPartitionsOnEtcd: a transaction's 300 offsets are
// pending in several metadata transactions and materialised in several,
// within etcd's default limits; a coordinator that loads the group afresh
// serves them.
func TestTxnCommitOfManyPartitionsOnEtcd(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	e := newEnvOn(t, metadata.NewStore(etcdtest.OpenKV(t, endpoint, "sediment")), 300)
	req := TxnCommitRequest{CommitRequest: CommitRequest{Group: "g", Generation: -1}, ProducerID: 7}
	for p := range int32(300) {
		req.Offsets = append(req.Offsets, CommitOffset{Topic: "big", Partition: p, Offset: 2000 + int64(p)})
	}
	res := recv(t, e.c.TxnCommit(req))
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	for p, err := range res.Partitions {
		if err != nil {
			t.Fatalf("partition %d: %v", p, err)
		}
	}
	e.restart()
	for p, o := range e.fetchedBig("g", 300) {
		if o != -1 {
			t.Fatalf("partition %d served at %d before the commit", p, o)
		}
	}
	e.complete(7, 0, true, "g")
	e.restart()
	for p, o := range e.fetchedBig("g", 300) {
		if o != 2000+int64(p) {
			t.Fatalf("partition %d at offset %d after the commit and a restart", p, o)
		}
	}
}

// TestCompleteTxnWaitsForPendingWrite: a transaction completed while its
// pending offsets are still being written completes them too, rather than
// leaving them pending for ever.
func TestCompleteTxnWaitsForPendingWrite(t *testing.T) {
	t.Parallel()
	kv := newGateKV(t)
	e := newEnvOn(t, metadata.NewStore(kv), 1)
	e.cluster.setTopic("t", 4)
	standalone := joined{"", -1}
	e.commit("g", standalone, nil, 1) // the group's record
	open := kv.close()
	pending := txnCommit(e.c, "g", standalone, 7, 10, 20)
	kv.waitEntered(t)
	completed := make(chan error, 1)
	go func() { completed <- e.c.CompleteTxn(context.Background(), ShardOf("g"), 7, 0, true) }()
	g, _ := e.c.lookup("g")
	testwait.Until(t, hangBound, func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.stableWaiters) > 0
	}, "the completion does not wait for the write in flight")
	open()
	if res := recv(t, pending); res.Err != nil || res.Partitions[0] != nil {
		t.Fatalf("txn commit: %+v", res)
	}
	if err := recv(t, completed); err != nil {
		t.Fatal(err)
	}
	if got := e.stable("g"); got != "10,20,-1,-1" {
		t.Fatalf("after the completion: %s", got)
	}
}

// TestDeleteOffsetsDropsPending: OffsetDelete of a partition also deletes
// the offsets pending for it in transactions, as Kafka's tombstone does:
// their commit then materialises nothing for it.
func TestDeleteOffsetsDropsPending(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	standalone := joined{"", -1}
	e.commit("g", standalone, nil, 5, 6)
	e.mustTxnCommit("g", standalone, 7, 10, -1, 12)
	e.mustTxnCommit("g", standalone, 8, 20, 21)
	res := recv(t, e.c.DeleteOffsets("g", []metadata.GroupPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 2}}))
	if res.Err != nil || res.Partitions[0] != nil || res.Partitions[1] != nil {
		t.Fatalf("delete offsets: %+v", res)
	}
	if got := e.stable("g"); got != "-1,u,-1,-1" {
		t.Fatalf("after deleting partitions 0 and 2: %s", got)
	}
	e.complete(7, 0, true, "g")
	e.complete(8, 0, true, "g")
	e.restart()
	if got := e.stable("g"); got != "-1,21,-1,-1" {
		t.Fatalf("after both commits and a restart: %s", got)
	}
}
