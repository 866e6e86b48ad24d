package metadata_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

// txnBackends runs body on a bbolt store and on a real etcd, each with a
// second store on the same data (another broker).
func txnBackends(t *testing.T, body func(t *testing.T, a, b *metadata.Store)) {
	t.Run("bbolt", func(t *testing.T) {
		kv, err := metadata.OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
		if err != nil {
			t.Fatal(err)
		}
		s := metadata.NewStore(kv)
		t.Cleanup(func() { s.Close() })
		body(t, s, s)
	})
	t.Run("etcd", func(t *testing.T) {
		endpoint, _ := etcdtest.Start(t)
		a := metadata.NewStore(etcdtest.OpenKV(t, endpoint, "txns"))
		b := metadata.NewStore(etcdtest.OpenKV(t, endpoint, "txns"))
		body(t, a, b)
	})
}

// TestTxnRecords: records round-trip under their shard, ids that are
// prefixes of each other or hold '/' stay apart, a write at a stale
// version or under a lost fence changes nothing, and delete removes.
func TestTxnRecords(t *testing.T) {
	txnBackends(t, func(t *testing.T, a, b *metadata.Store) {
		ctx := context.Background()
		fenceA, err := a.ClaimTxns(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		rec := &metadata.TxnRecord{ProducerID: 7, ProducerEpoch: 2, LastProducerID: -1, LastProducerEpoch: 1,
			TimeoutMs: 60000, State: "Ongoing", Partitions: []metadata.TxnPartition{{Topic: "t", Partition: 3}},
			Groups: []string{"g"}, StartMs: 100, UpdateMs: 101}
		ids := []string{"a", "a/b", "a%2Fb", ""}
		versions := map[string]int64{}
		for _, id := range ids {
			v, err := a.WriteTxn(ctx, fenceA, id, 0, rec)
			if err != nil || v == 0 {
				t.Fatalf("write %q: v=%d err=%v", id, v, err)
			}
			versions[id] = v
		}
		if _, err := a.WriteTxn(ctx, fenceA, "a", 0, rec); !metadata.IsConflict(err) {
			t.Fatalf("write at a stale version: %v", err)
		}
		all, err := b.LoadTxns(ctx)
		if err != nil || len(all) != len(ids) {
			t.Fatalf("load all: %d records, err %v", len(all), err)
		}
		for _, st := range all {
			if !reflect.DeepEqual(st.Record, *rec) || st.Version != versions[st.ID] {
				t.Fatalf("loaded %q: %+v version %d, want %+v version %d", st.ID, st.Record, st.Version, *rec, versions[st.ID])
			}
		}
		shard, err := b.LoadShardTxns(ctx, metadata.GroupShard("a/b"))
		if err != nil || !containsTxn(shard, "a/b") || containsTxn(shard, "a") != (metadata.GroupShard("a") == metadata.GroupShard("a/b")) {
			t.Fatalf("shard of a/b: %+v err %v", shard, err)
		}

		fenceB, err := b.ClaimTxns(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.WriteTxn(ctx, fenceA, "a", versions["a"], nil); !metadata.IsConflict(err) {
			t.Fatalf("delete under a lost fence: %v", err)
		}
		if holds, err := a.TxnFenceHolds(ctx, fenceA); err != nil || holds {
			t.Fatalf("lost fence holds=%v err=%v", holds, err)
		}
		if v, err := b.WriteTxn(ctx, fenceB, "a", versions["a"], nil); err != nil || v != 0 {
			t.Fatalf("delete: v=%d err=%v", v, err)
		}
		if all, _ := b.LoadTxns(ctx); containsTxn(all, "a") || len(all) != len(ids)-1 {
			t.Fatalf("after delete: %+v", all)
		}
	})
}

func containsTxn(txns []metadata.StoredTxn, id string) bool {
	for _, st := range txns {
		if st.ID == id {
			return true
		}
	}
	return false
}

// TestTxnCoordinatorEpochs: the first raise gives 0, every later one adds
// one per shard, a raise under a lost fence fails and changes nothing.
func TestTxnCoordinatorEpochs(t *testing.T) {
	txnBackends(t, func(t *testing.T, a, b *metadata.Store) {
		ctx := context.Background()
		fenceA, err := a.ClaimTxns(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		got, err := a.RaiseTxnCoordinatorEpochs(ctx, fenceA, []int32{0, 5})
		if err != nil || !reflect.DeepEqual(got, []int32{0, 0}) {
			t.Fatalf("first raise: %v %v", got, err)
		}
		got, err = a.RaiseTxnCoordinatorEpochs(ctx, fenceA, []int32{5})
		if err != nil || !reflect.DeepEqual(got, []int32{1}) {
			t.Fatalf("second raise: %v %v", got, err)
		}
		fenceB, err := b.ClaimTxns(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.RaiseTxnCoordinatorEpochs(ctx, fenceA, []int32{5}); !metadata.IsConflict(err) {
			t.Fatalf("raise under a lost fence: %v", err)
		}
		got, err = b.RaiseTxnCoordinatorEpochs(ctx, fenceB, []int32{5, 0})
		if err != nil || !reflect.DeepEqual(got, []int32{2, 1}) {
			t.Fatalf("raise by the new owner: %v %v", got, err)
		}
		if _, err := b.RaiseTxnCoordinatorEpochs(ctx, fenceB, []int32{64}); err == nil {
			t.Fatal("raise of shard 64 accepted")
		}
	})
}

// TestWriteTxns: many records in one transaction; one stale version fails
// them all; ReadTxn reads one back.
func TestWriteTxns(t *testing.T) {
	txnBackends(t, func(t *testing.T, a, b *metadata.Store) {
		ctx := context.Background()
		fence, err := a.ClaimTxns(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		rec := &metadata.TxnRecord{ProducerID: 1, State: "Empty", StartMs: -1}
		vs, err := a.WriteTxns(ctx, []metadata.Cond{fence}, []metadata.TxnWrite{{ID: "x", Record: rec}, {ID: "y", Record: rec}})
		if err != nil || len(vs) != 2 || vs[0] == 0 || vs[0] != vs[1] {
			t.Fatalf("write two: %v %v", vs, err)
		}
		ongoing := &metadata.TxnRecord{ProducerID: 1, State: "Ongoing", StartMs: 5}
		_, err = a.WriteTxns(ctx, []metadata.Cond{fence}, []metadata.TxnWrite{{ID: "x", Version: vs[0], Record: ongoing},
			{ID: "y", Version: vs[1] - 1, Record: ongoing}})
		if !metadata.IsConflict(err) {
			t.Fatalf("a stale version: %v", err)
		}
		st, ok, err := b.ReadTxn(ctx, "x")
		if err != nil || !ok || st.Version != vs[0] || st.Record.State != "Empty" {
			t.Fatalf("read x: %+v %v %v", st, ok, err)
		}
		if _, ok, err := b.ReadTxn(ctx, "z"); ok || err != nil {
			t.Fatalf("read z: %v %v", ok, err)
		}
		vs, err = a.WriteTxns(ctx, []metadata.Cond{fence}, []metadata.TxnWrite{{ID: "x", Version: vs[0]}, {ID: "y", Version: vs[1], Record: ongoing}})
		if err != nil || vs[0] != 0 || vs[1] == 0 {
			t.Fatalf("delete one, write the other: %v %v", vs, err)
		}
	})
}
