package groupcoord

import (
	"bytes"
	"testing"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

// TestShardMoveOnEtcd: the shard move of TestShardMove on a real etcd,
// each coordinator with its own client: the new owner serves the group
// with its generation, assignment and offsets, and the old owner's late
// commit fails on the fence, changing nothing.
func TestShardMoveOnEtcd(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	ce := newClusterEnv(t, etcdtest.OpenKV(t, endpoint, "sediment"))
	metaB := metadata.NewStore(etcdtest.OpenKV(t, endpoint, "sediment"))
	t.Cleanup(func() { metaB.Close() })
	a, b := ce.openNode(1), ce.openNodeOn(2, metaB)
	shard := ShardOf("g")
	ce.take(a, shard)
	ms := ce.on(a).stableGroup("g", 2)
	ce.commit("g", ms[0], nil, 7, 8)

	ce.take(b, shard)
	ce.on(b)
	wantErr(t, "heartbeat on B", ce.heartbeat("g", ms[0]), nil)
	sync := recv(t, b.c.Sync(SyncRequest{Group: "g", MemberID: ms[1].id, Generation: ms[1].gen}))
	if sync.Err != nil || !bytes.Equal(sync.Assignment, []byte{1}) {
		t.Fatalf("sync on B: %+v", sync)
	}
	if got := fmtOffsets(ce.fetched("g")); got != "7,8,-1,-1" {
		t.Fatalf("offsets on B: %s", got)
	}
	late := recv(t, commitAsync(a.c, "g", ms[0], 100))
	if late.Partitions[0] != ErrNotCoordinator {
		t.Fatalf("A's late commit: %+v", late)
	}
	wantErr(t, "A after its fence failed", a.c.Heartbeat(HeartbeatRequest{Group: "g", MemberID: ms[0].id, Generation: ms[0].gen}),
		ErrNotCoordinator)
	if res := ce.commit("g", ms[0], nil, 9); res.Partitions[0] != nil {
		t.Fatalf("commit on B: %+v", res)
	}
	if got := fmtOffsets(ce.fetched("g")); got != "9,8,-1,-1" {
		t.Fatalf("offsets on B after A's late commit: %s", got)
	}
}
