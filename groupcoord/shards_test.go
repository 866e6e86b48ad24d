package groupcoord

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sediment-io/sediment/metadata"
)

// fakeFencer is a cluster's view of the shards one broker owns, set by
// the test.
type fakeFencer struct {
	mu     sync.Mutex // guards fences
	fences map[int32]metadata.Cond
}

func newFakeFencer() *fakeFencer { return &fakeFencer{fences: map[int32]metadata.Cond{}} }

func (f *fakeFencer) ShardFence(shard int32) (metadata.Cond, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.fences[shard]
	return c, ok
}

func (f *fakeFencer) set(shard int32, c metadata.Cond) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fences[shard] = c
}

func (f *fakeFencer) clear(shard int32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.fences, shard)
}

// node is one coordinator of a cluster under test.
type node struct {
	c     *Coordinator
	fence *fakeFencer
}

// clusterEnv is several coordinators over one metadata store, with one
// clock and one view of the topics.
type clusterEnv struct {
	*env
	kv metadata.KV
}

// newClusterEnv is newEnv without a coordinator: nodes are opened with
// openNode, over kv (a fresh bbolt store when nil).
func newClusterEnv(t *testing.T, kv metadata.KV) *clusterEnv {
	t.Helper()
	if kv == nil {
		b, err := metadata.OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
		if err != nil {
			t.Fatal(err)
		}
		kv = b
	}
	e := &env{t: t, clock: newFakeClock(), meta: metadata.NewStore(kv),
		cluster: &fakeCluster{topics: map[string]fakeTopic{}, config: map[string]string{"group.initial.rebalance.delay.ms": "0"}}}
	e.cluster.setTopic("t", 4)
	t.Cleanup(func() { e.meta.Close() })
	return &clusterEnv{env: e, kv: kv}
}

// openNode opens a coordinator of the cluster, owning no shard yet.
func (ce *clusterEnv) openNode(id int32) *node {
	ce.t.Helper()
	return ce.openNodeOn(id, ce.meta)
}

// openNodeOn is openNode over a metadata store of its own (its own etcd
// client, as a broker has).
func (ce *clusterEnv) openNodeOn(id int32, meta *metadata.Store) *node {
	ce.t.Helper()
	n := &node{fence: newFakeFencer()}
	c, err := Open(ce.t.Context(), Config{Meta: meta, Cluster: ce.cluster, NodeID: id, Fence: n.fence, Clock: ce.clock,
		Logger: testLogger()})
	if err != nil {
		ce.t.Fatal(err)
	}
	n.c = c
	ce.t.Cleanup(func() { c.Close() })
	return n
}

// take makes n the owner of shard as the cluster would: it rewrites the
// shard's own key (fencing out any earlier owner) and acquires the shard.
func (ce *clusterEnv) take(n *node, shard int32) metadata.Cond {
	ce.t.Helper()
	key := fmt.Sprintf("own/shards/%03d", shard)
	ctx := context.Background()
	it, _, err := ce.kv.Get(ctx, key)
	if err != nil {
		ce.t.Fatal(err)
	}
	rev, err := ce.kv.Txn(ctx, []metadata.Cond{{Key: key, Version: it.Version}}, []metadata.Op{metadata.Put(key, []byte("{}"))})
	if err != nil {
		ce.t.Fatal(err)
	}
	fence := metadata.Cond{Key: key, Version: rev}
	n.fence.set(shard, fence)
	if err := n.c.AcquireShard(ctx, shard); err != nil {
		ce.t.Fatal(err)
	}
	return fence
}

// on points the env's helpers (stableGroup, commit, fetched, ...) at n.
func (ce *clusterEnv) on(n *node) *env {
	ce.env.c = n.c
	return ce.env
}

// otherShardGroup returns a group id whose shard is not shard.
func otherShardGroup(shard int32) string {
	for i := range 100 {
		if id := fmt.Sprintf("other-%d", i); ShardOf(id) != shard {
			return id
		}
	}
	panic("every id in one shard")
}

// TestShardMove: a shard moves from A to B. B serves the group with the
// generation, members, assignments and offsets A left; its members go on
// with their member ids. A, which has not noticed, loses its late commit
// to the fence, drops the shard, and answers NOT_COORDINATOR.
func TestShardMove(t *testing.T) {
	t.Parallel()
	ce := newClusterEnv(t, nil)
	a, b := ce.openNode(1), ce.openNode(2)
	shard := ShardOf("g")
	ce.take(a, shard)
	ms := ce.on(a).stableGroup("g", 2)
	ce.commit("g", ms[0], nil, 7, 8)
	wantErr(t, "B before the move", b.c.Heartbeat(HeartbeatRequest{Group: "g", MemberID: ms[0].id, Generation: ms[0].gen}), ErrNotCoordinator)

	ce.take(b, shard)
	ce.on(b)
	d := b.c.Describe("g")
	if d.Err != nil || d.State != StateStable || len(d.Members) != 2 || d.Members[0].MemberID != ms[0].id {
		t.Fatalf("B describes: %+v", d)
	}
	wantErr(t, "heartbeat on B", ce.heartbeat("g", ms[1]), nil)
	sync := recv(t, b.c.Sync(SyncRequest{Group: "g", MemberID: ms[1].id, Generation: ms[1].gen}))
	if sync.Err != nil || !bytes.Equal(sync.Assignment, []byte{1}) {
		t.Fatalf("sync on B: %+v", sync)
	}
	if got := fmtOffsets(ce.fetched("g")); got != "7,8,-1,-1" {
		t.Fatalf("offsets on B: %s", got)
	}
	if res := ce.commit("g", ms[0], nil, 9); res.Err != nil || res.Partitions[0] != nil {
		t.Fatalf("commit on B: %+v", res)
	}

	late := recv(t, a.c.Commit(CommitRequest{Group: "g", MemberID: ms[0].id, Generation: ms[0].gen,
		Offsets: []CommitOffset{{Topic: "t", Partition: 1, Offset: 100}}}))
	if late.Err != nil || late.Partitions[0] != ErrNotCoordinator {
		t.Fatalf("A's late commit: %+v", late)
	}
	wantErr(t, "A after its fence failed", a.c.Heartbeat(HeartbeatRequest{Group: "g", MemberID: ms[0].id, Generation: ms[0].gen}),
		ErrNotCoordinator)
	if d := a.c.Describe("g"); d.Err != ErrNotCoordinator {
		t.Fatalf("A describes after its fence failed: %+v", d)
	}
	if na, nb := a.c.ownedShards(), b.c.ownedShards(); na != 0 || nb != 1 {
		t.Fatalf("shards served: A %d, B %d", na, nb)
	}
	stored, err := ce.meta.LoadShardGroups(context.Background(), shard)
	if err != nil || len(stored) != 1 || stored[0].Offsets[metadata.GroupPartition{Topic: "t", Partition: 0}].Offset != 9 ||
		stored[0].Offsets[metadata.GroupPartition{Topic: "t", Partition: 1}].Offset != 8 {
		t.Fatalf("stored after A's late commit: %+v (%v)", stored, err)
	}
	other := otherShardGroup(shard)
	if res := recv(t, b.c.Commit(CommitRequest{Group: other, Generation: -1, Offsets: []CommitOffset{{Topic: "t", Offset: 1}}})); res.Err != ErrNotCoordinator {
		t.Fatalf("B, for a group of a shard it does not own: %+v", res)
	}
}

// TestShardMoveStaticMembers: after a move, a static member restarting
// (no member id, same instance id) takes its old place on the new
// coordinator with its assignment and no rebalance, and the other member
// goes on with its member id and generation.
func TestShardMoveStaticMembers(t *testing.T) {
	t.Parallel()
	ce := newClusterEnv(t, nil)
	a, b := ce.openNode(1), ce.openNode(2)
	shard := ShardOf("g")
	ce.take(a, shard)
	leader, static := ce.on(a).staticPair("g")
	ce.take(b, shard)
	ce.on(b)
	res := recv(t, b.c.Join(staticJoin("g", "", "s-1")))
	if res.Err != nil || res.Generation != static.gen || res.LeaderID != leader.id {
		t.Fatalf("static rejoin on B: %+v", res)
	}
	sync := recv(t, b.c.Sync(SyncRequest{Group: "g", MemberID: res.MemberID, InstanceID: strPtr("s-1"), Generation: res.Generation}))
	if sync.Err != nil || !bytes.Equal(sync.Assignment, []byte{1}) {
		t.Fatalf("sync of the static member on B: %+v", sync)
	}
	if s := ce.state("g"); s != StateStable {
		t.Fatalf("state on B: %v", s)
	}
	wantErr(t, "leader heartbeat on B", ce.heartbeat("g", leader), nil)
	if res := ce.commit("g", leader, nil, 4); res.Err != nil || res.Partitions[0] != nil {
		t.Fatalf("leader commit on B: %+v", res)
	}
}

// TestOpenMigratesUnshardedGroups: a one-node store written before shards
// opens with its groups moved under their shards: a stable group resumes
// with its members and offsets.
func TestOpenMigratesUnshardedGroups(t *testing.T) {
	t.Parallel()
	ce := newClusterEnv(t, nil)
	rec, _ := json.Marshal(metadata.GroupRecord{ProtocolType: "consumer", Protocol: "range", Generation: 4, Leader: "m-1",
		StateMs: ce.clock.Now().UnixMilli(), Members: []metadata.GroupMemberRecord{{MemberID: "m-1", SessionTimeoutMs: 10000,
			RebalanceTimeoutMs: 5000, Protocols: []metadata.GroupProtocol{{Name: "range", Metadata: subscription("t")}}, Assignment: []byte{7}}}})
	id, _, _ := ce.cluster.TopicPartitions("t")
	off, _ := json.Marshal(metadata.CommittedOffset{TopicID: id, Offset: 42, LeaderEpoch: -1})
	old := []metadata.Op{metadata.Put("groups/g%2F1", rec), metadata.Put("offsets/g%2F1/t/0000000002", off)}
	if _, err := ce.kv.Txn(context.Background(), nil, old); err != nil {
		t.Fatal(err)
	}
	ce.open()
	wantErr(t, "heartbeat after the migration", ce.heartbeat("g/1", joined{"m-1", 4}), nil)
	if got := fmtOffsets(ce.fetched("g/1")); got != "-1,-1,42,-1" {
		t.Fatalf("offsets after the migration: %s", got)
	}
}

// TestAcquireShardAgain: acquiring a shard served already under the same
// fence keeps its state; under a new fence (the key was written again) it
// is loaded again from metadata; without a fence from the cluster it
// fails.
func TestAcquireShardAgain(t *testing.T) {
	t.Parallel()
	ce := newClusterEnv(t, nil)
	a := ce.openNode(1)
	shard := ShardOf("g")
	if err := a.c.AcquireShard(context.Background(), shard); !errors.Is(err, ErrNotCoordinator) {
		t.Fatalf("acquire with no fence: %v", err)
	}
	ce.take(a, shard)
	waiting := a.c.Join(join("g", "")) // waits in the initial rebalance: in memory only
	if err := a.c.AcquireShard(context.Background(), shard); err != nil {
		t.Fatal(err)
	}
	notYet(t, waiting, "join across an acquire under the same fence")
	ce.take(a, shard)
	if res := recv(t, waiting); res.Err != ErrNotCoordinator {
		t.Fatalf("join across an acquire under a new fence: %+v", res)
	}
	if d := a.c.Describe("g"); d.Err != ErrGroupNotFound {
		t.Fatalf("the group that was never stored, after the reload: %+v", d)
	}
}
