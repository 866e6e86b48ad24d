package groupcoord

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

// failNthKV fails one transaction: the nth after it is armed.
type failNthKV struct {
	metadata.KV
	left atomic.Int64 // transactions before the failing one; negative: none armed
}

var errInjected = errors.New("injected: metadata write failed")

func (k *failNthKV) Txn(ctx context.Context, conds []metadata.Cond, ops []metadata.Op) (int64, error) {
	if k.left.Add(-1) == 0 {
		return 0, errInjected
	}
	return k.KV.Txn(ctx, conds, ops)
}

// newEnvOn is newEnv over meta, with topic "big" of parts partitions and
// extra broker configs.
func newEnvOn(t *testing.T, meta *metadata.Store, parts int32, kv ...string) *env {
	t.Helper()
	e := &env{t: t, clock: newFakeClock(), meta: meta,
		cluster: &fakeCluster{topics: map[string]fakeTopic{}, config: map[string]string{"group.initial.rebalance.delay.ms": "0"}}}
	for i := 0; i+1 < len(kv); i += 2 {
		e.cluster.config[kv[i]] = kv[i+1]
	}
	e.cluster.setTopic("big", parts)
	t.Cleanup(func() { e.meta.Close() })
	e.open()
	return e
}

// commitBig commits offset 1000+p for partitions [0, n) of "big",
// standalone, each with md as its metadata.
func (e *env) commitBig(group string, n int32, md ...string) CommitResult {
	e.t.Helper()
	req := CommitRequest{Group: group, Generation: -1}
	for p := range n {
		req.Offsets = append(req.Offsets, CommitOffset{Topic: "big", Partition: p, Offset: 1000 + int64(p)})
		if len(md) > 0 {
			req.Offsets[p].Metadata = &md[0]
		}
	}
	return recv(e.t, e.c.Commit(req))
}

// fetchedBig returns the committed offsets of partitions [0, n) of "big".
func (e *env) fetchedBig(group string, n int32) []int64 {
	e.t.Helper()
	ft := FetchTopic{Topic: "big"}
	for p := range n {
		ft.Partitions = append(ft.Partitions, p)
	}
	res := recv(e.t, e.c.FetchOffsets(FetchRequest{Group: group, Topics: []FetchTopic{ft}}))
	if res.Err != nil {
		e.t.Fatalf("fetch: %v", res.Err)
	}
	out := make([]int64, n)
	for i, p := range res.Topics[0].Partitions {
		out[i] = p.Offset
	}
	return out
}

// On a real etcd with its default limits, an OffsetCommit of 300
// partitions is stored (in several transactions) and served, also by a
// coordinator that loads the group afresh.
func TestCommitOfManyPartitionsOnEtcd(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	e := newEnvOn(t, metadata.NewStore(etcdtest.OpenKV(t, endpoint, "sediment")), 300)
	checkCommitOfMany(t, e)
}

// The same with 16 KiB of metadata a partition (offset.metadata.max.bytes
// raised): about 5 MiB, over etcd's request size, split by bytes too.
func TestCommitOfLargeMetadataOnEtcd(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	e := newEnvOn(t, metadata.NewStore(etcdtest.OpenKV(t, endpoint, "sediment")), 300, "offset.metadata.max.bytes", "20000")
	checkCommitOfMany(t, e, strings.Repeat("m", 16<<10))
}

func checkCommitOfMany(t *testing.T, e *env, md ...string) {
	t.Helper()
	res := e.commitBig("g", 300, md...)
	if res.Err != nil {
		t.Fatalf("commit: %v", res.Err)
	}
	for p, err := range res.Partitions {
		if err != nil {
			t.Fatalf("partition %d: %v", p, err)
		}
	}
	e.restart()
	for p, o := range e.fetchedBig("g", 300) {
		if o != 1000+int64(p) {
			t.Fatalf("partition %d at offset %d after a restart", p, o)
		}
	}
}

// A commit split over several transactions of which one fails is answered
// per partition: the partitions of the failed transaction get its error,
// the others are durable; the coordinator serves exactly what is stored,
// before and after a restart.
func TestCommitOfManyPartitionsPartlyFailed(t *testing.T) {
	bolt, err := metadata.OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	kv := &failNthKV{KV: bolt}
	kv.left.Store(-1)
	e := newEnvOn(t, metadata.NewStore(kv), 300)
	if res := e.commitBig("g", 1); res.Err != nil || res.Partitions[0] != nil { // the group's record is stored
		t.Fatalf("first commit: %+v", res)
	}
	kv.left.Store(2) // the second change: partitions [127, 254)
	res := e.commitBig("g", 300)
	if res.Err != nil {
		t.Fatalf("commit: %v", res.Err)
	}
	failed := func(p int) bool { return p >= maxChangeOffsets && p < 2*maxChangeOffsets }
	for p, err := range res.Partitions {
		if failed(p) != errors.Is(err, errInjected) {
			t.Fatalf("partition %d answered %v", p, err)
		}
	}
	check := func(when string) {
		for p, o := range e.fetchedBig("g", 300) {
			want := 1000 + int64(p)
			if failed(p) && p > 0 {
				want = -1
			}
			if o != want {
				t.Fatalf("%s: partition %d at offset %d, want %d", when, p, o, want)
			}
		}
	}
	check("served")
	e.restart()
	check("after a restart")
}

func TestChangeRanges(t *testing.T) {
	offsets := func(n, md int) []metadata.OffsetWrite {
		ws := make([]metadata.OffsetWrite, n)
		for i := range ws {
			ws[i].Offset = &metadata.CommittedOffset{Metadata: strings.Repeat("m", md)}
		}
		return ws
	}
	for _, tc := range []struct {
		name   string
		writes []metadata.OffsetWrite
		want   string
	}{
		{"one", offsets(1, 0), "[[0 1]]"},
		{"at the count", offsets(127, 0), "[[0 127]]"},
		{"over the count", offsets(300, 0), "[[0 127] [127 254] [254 300]]"},
		{"deletes", make([]metadata.OffsetWrite, 128), "[[0 127] [127 128]]"},
		{"by bytes", offsets(5, 400<<10), "[[0 2] [2 4] [4 5]]"},
		{"one too large", offsets(2, 2<<20), "[[0 1] [1 2]]"},
	} {
		if got := fmt.Sprint(changeRanges(tc.writes)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
