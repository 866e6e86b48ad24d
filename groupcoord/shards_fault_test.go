package groupcoord

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sediment-io/sediment/internal/testwait"
	"github.com/sediment-io/sediment/metadata"
)

// gateKV holds the metadata transactions of group writes while closed,
// and can make the next one end with an unknown outcome after applying.
type gateKV struct {
	metadata.KV
	mu        sync.Mutex    // guards the fields below
	gate      chan struct{} // non-nil: group writes wait until it closes
	entered   chan struct{} // a group write is waiting at the gate
	uncertain bool          // the next group write applies, then reports ErrUncertain
	writes    int           // group writes sent
	maxConds  int           // the most conditions of one group write
	maxOps    int           // the most writes of one group write
}

func newGateKV(t *testing.T) *gateKV {
	t.Helper()
	b, err := metadata.OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	return &gateKV{KV: b, entered: make(chan struct{}, 16)}
}

// close makes group writes wait; it returns the func that lets them go.
func (k *gateKV) close() (open func()) {
	k.mu.Lock()
	defer k.mu.Unlock()
	gate := make(chan struct{})
	k.gate = gate
	return func() {
		k.mu.Lock()
		k.gate = nil
		k.mu.Unlock()
		close(gate)
	}
}

// waitEntered waits until a group write waits at the gate.
func (k *gateKV) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-k.entered:
	case <-time.After(hangBound):
		t.Fatal("no group write reached the gate")
	}
}

func (k *gateKV) groupWrites() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.writes
}

func (k *gateKV) Txn(ctx context.Context, conds []metadata.Cond, ops []metadata.Op) (int64, error) {
	if !isGroupWrite(ops) {
		return k.KV.Txn(ctx, conds, ops)
	}
	k.mu.Lock()
	gate, uncertain := k.gate, k.uncertain
	k.uncertain = false
	k.writes++
	k.maxConds, k.maxOps = max(k.maxConds, len(conds)), max(k.maxOps, len(ops))
	k.mu.Unlock()
	if gate != nil {
		k.entered <- struct{}{}
		<-gate
	}
	rev, err := k.KV.Txn(ctx, conds, ops)
	if err == nil && uncertain {
		return 0, fmt.Errorf("injected lost answer: %w", metadata.ErrUncertain)
	}
	return rev, err
}

func isGroupWrite(ops []metadata.Op) bool {
	for _, op := range ops {
		if strings.HasPrefix(op.Key, "groups/") || strings.HasPrefix(op.Key, "offsets/") || strings.HasPrefix(op.Key, "txnoffsets/") {
			return true
		}
	}
	return false
}

// commitAsync commits offsets of "t" (partition p gets offsets[p]) and
// returns the channel of the answer.
func commitAsync(c *Coordinator, group string, m joined, offsets ...int64) <-chan CommitResult {
	req := CommitRequest{Group: group, MemberID: m.id, Generation: m.gen}
	for p, o := range offsets {
		req.Offsets = append(req.Offsets, CommitOffset{Topic: "t", Partition: int32(p), Offset: o})
	}
	return c.Commit(req)
}

// TestReleaseShardFinishesPendingWrites: a graceful hand-over refuses new
// requests at once, answers the commits already queued once they are
// durable, and only then forgets the shard; the next owner finds them.
func TestReleaseShardFinishesPendingWrites(t *testing.T) {
	t.Parallel()
	kv := newGateKV(t)
	ce := newClusterEnv(t, kv)
	a, b := ce.openNode(1), ce.openNode(2)
	shard := ShardOf("g")
	ce.take(a, shard)
	ms := ce.on(a).stableGroup("g", 1)
	open := kv.close()
	first := commitAsync(a.c, "g", ms[0], 1)
	kv.waitEntered(t)
	second := commitAsync(a.c, "g", ms[0], 2, 2)
	released := make(chan error, 1)
	go func() { released <- a.c.ReleaseShard(context.Background(), shard) }()
	testwait.Until(t, hangBound, func() bool {
		return a.c.Heartbeat(HeartbeatRequest{Group: "g", MemberID: ms[0].id, Generation: ms[0].gen}) == ErrNotCoordinator
	}, "A still serves the group while releasing it")
	notYet(t, released, "ReleaseShard with a write in flight")
	open()
	for i, ch := range []<-chan CommitResult{first, second} {
		if res := recv(t, ch); res.Err != nil || res.Partitions[0] != nil {
			t.Fatalf("commit %d queued before the release: %+v", i, res)
		}
	}
	if err := recv(t, released); err != nil {
		t.Fatal(err)
	}
	ce.take(b, shard)
	if got := fmtOffsets(ce.on(b).fetched("g")); got != "2,2,-1,-1" {
		t.Fatalf("offsets on B: %s", got)
	}
	wantErr(t, "heartbeat on B", ce.heartbeat("g", ms[0]), nil)
}

// TestReleaseShardTimeout: a release whose pending writes do not finish in
// time fails, and the caller's DropShard then fails them.
func TestReleaseShardTimeout(t *testing.T) {
	t.Parallel()
	kv := newGateKV(t)
	ce := newClusterEnv(t, kv)
	a := ce.openNode(1)
	shard := ShardOf("g")
	ce.take(a, shard)
	ms := ce.on(a).stableGroup("g", 1)
	open := kv.close()
	first := commitAsync(a.c, "g", ms[0], 1)
	kv.waitEntered(t)
	second := commitAsync(a.c, "g", ms[0], 2, 2)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.c.ReleaseShard(ctx, shard); !errors.Is(err, context.Canceled) {
		t.Fatalf("release with pending writes and an ended context: %v", err)
	}
	a.c.DropShard(shard)
	open()
	if res := recv(t, first); res.Partitions[0] != nil {
		t.Fatalf("the commit in flight at the drop: %+v", res) // its fence held: it is durable
	}
	if res := recv(t, second); res.Partitions[0] != ErrNotCoordinator {
		t.Fatalf("the commit queued at the drop: %+v", res)
	}
	stored, _ := ce.meta.LoadShardGroups(context.Background(), shard)
	if o := stored[0].Offsets[metadata.GroupPartition{Topic: "t", Partition: 1}]; o.Offset != 0 {
		t.Fatalf("the failed commit was written: %+v", stored[0].Offsets)
	}
}

// TestDropShardAnswersWaiters: a dropped shard's waiting JoinGroup is
// answered NOT_COORDINATOR at once, as is every later request.
func TestDropShardAnswersWaiters(t *testing.T) {
	t.Parallel()
	ce := newClusterEnv(t, nil)
	a := ce.openNode(1)
	shard := ShardOf("g")
	ce.take(a, shard)
	ms := ce.on(a).stableGroup("g", 1)
	waiting := a.c.Join(join("g", "")) // a new member: a rebalance that waits for ms[0]
	a.c.DropShard(shard)
	if res := recv(t, waiting); res.Err != ErrNotCoordinator {
		t.Fatalf("join waiting at the drop: %+v", res)
	}
	wantErr(t, "heartbeat after the drop", ce.heartbeat("g", ms[0]), ErrNotCoordinator)
	if l := a.c.List(nil); len(l) != 0 {
		t.Fatalf("groups listed after the drop: %+v", l)
	}
}

// TestShardPastLocalDeadline: once the cluster gives no fence for a shard
// (the broker is past its local lease deadline), the coordinator answers
// NOT_COORDINATOR and sends no queued write; with the fence back, it
// serves again.
func TestShardPastLocalDeadline(t *testing.T) {
	t.Parallel()
	kv := newGateKV(t)
	ce := newClusterEnv(t, kv)
	a := ce.openNode(1)
	shard := ShardOf("g")
	fence := ce.take(a, shard)
	ms := ce.on(a).stableGroup("g", 1)
	open := kv.close()
	first := commitAsync(a.c, "g", ms[0], 1)
	kv.waitEntered(t)
	queued := commitAsync(a.c, "g", ms[0], 2)
	a.fence.clear(shard)
	wantErr(t, "heartbeat past the deadline", ce.heartbeat("g", ms[0]), ErrNotCoordinator)
	sent := kv.groupWrites()
	open()
	recv(t, first)
	if res := recv(t, queued); res.Partitions[0] != ErrNotCoordinator {
		t.Fatalf("commit queued before the deadline: %+v", res)
	}
	if n := kv.groupWrites(); n != sent {
		t.Fatalf("%d group writes sent past the deadline", n-sent)
	}
	a.fence.set(shard, fence)
	wantErr(t, "heartbeat with the fence back", ce.heartbeat("g", ms[0]), nil)
	if res := ce.commit("g", ms[0], nil, 3); res.Partitions[0] != nil {
		t.Fatalf("commit with the fence back: %+v", res)
	}
}

// TestUnknownOutcomeIsReadBack: a group write whose answer is lost is
// not written again: the commit fails retriably, the record version is
// read back, and the client's retry lands.
func TestUnknownOutcomeIsReadBack(t *testing.T) {
	t.Parallel()
	kv := newGateKV(t)
	ce := newClusterEnv(t, kv)
	a := ce.openNode(1)
	ce.take(a, ShardOf("u"))
	kv.mu.Lock()
	kv.uncertain = true
	kv.mu.Unlock()
	sent := kv.groupWrites()
	standalone := func(o int64) CommitResult {
		return recv(t, a.c.Commit(CommitRequest{Group: "u", Generation: -1, Offsets: []CommitOffset{{Topic: "t", Offset: o}}}))
	}
	if res := standalone(5); !errors.Is(res.Partitions[0], ErrCoordinatorNotAvailable) {
		t.Fatalf("commit with a lost answer: %+v", res)
	}
	if n := kv.groupWrites() - sent; n != 1 {
		t.Fatalf("%d writes for one commit with a lost answer: it was retried", n)
	}
	if res := standalone(6); res.Partitions[0] != nil {
		t.Fatalf("the client's retry: %+v", res)
	}
	ce.on(a)
	if got := fmtOffsets(ce.fetched("u")); got != "6,-1,-1,-1" {
		t.Fatalf("offsets: %s", got)
	}
}

// TestPersisterTxnBounds: changes pending together are written in few
// transactions, none over etcd's default 128 conditions or writes, each
// fenced by the shards it touches.
func TestPersisterTxnBounds(t *testing.T) {
	t.Parallel()
	kv := newGateKV(t)
	ce := newClusterEnv(t, kv)
	a := ce.openNode(1)
	for shard := range int32(Shards) {
		ce.take(a, shard)
	}
	open := kv.close()
	first := commitAsync(a.c, "first", joined{gen: -1}, 1)
	kv.waitEntered(t)
	const n = 300
	var pending []<-chan CommitResult
	for i := range n {
		pending = append(pending, commitAsync(a.c, fmt.Sprintf("b-%d", i), joined{gen: -1}, 1, 2))
	}
	sent := kv.groupWrites()
	open()
	recv(t, first)
	for i, ch := range pending {
		if res := recv(t, ch); res.Err != nil || res.Partitions[0] != nil || res.Partitions[1] != nil {
			t.Fatalf("commit %d: %+v", i, res)
		}
	}
	kv.mu.Lock()
	defer kv.mu.Unlock()
	if txns := kv.writes - sent; txns > n/10 || kv.maxConds > maxTxnOps || kv.maxOps > maxTxnOps {
		t.Fatalf("%d commits in %d transactions, at most %d conditions and %d writes", n, txns, kv.maxConds, kv.maxOps)
	}
}

// TestUnknownOutcomeOfDeletion: a group deletion whose answer is lost
// (it applied) fails; the group's next commit stores its record again
// instead of failing for a missing record.
func TestUnknownOutcomeOfDeletion(t *testing.T) {
	t.Parallel()
	kv := newGateKV(t)
	ce := newClusterEnv(t, kv)
	a := ce.openNode(1)
	ce.take(a, ShardOf("u"))
	standalone := func(o int64) CommitResult {
		return recv(t, a.c.Commit(CommitRequest{Group: "u", Generation: -1, Offsets: []CommitOffset{{Topic: "t", Offset: o}}}))
	}
	if res := standalone(5); res.Partitions[0] != nil {
		t.Fatalf("commit: %+v", res)
	}
	kv.mu.Lock()
	kv.uncertain = true
	kv.mu.Unlock()
	if errs := recv(t, a.c.DeleteGroups([]string{"u"})); !errors.Is(errs[0], ErrCoordinatorNotAvailable) {
		t.Fatalf("deletion with a lost answer: %v", errs)
	}
	if res := standalone(6); res.Partitions[0] != nil {
		t.Fatalf("commit after the deletion's lost answer: %+v", res)
	}
	ce.on(a)
	if got := fmtOffsets(ce.fetched("u")); got != "6,-1,-1,-1" {
		t.Fatalf("offsets: %s", got)
	}
}
