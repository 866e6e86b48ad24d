package metadata_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/sediment-io/sediment/metadata"
)

// writeUnsharded stores n groups (ids with '/' and '%' among them), each
// with two offsets, in the layout before shards.
func writeUnsharded(t *testing.T, kv metadata.KV, n int) {
	t.Helper()
	for i := range n {
		id := fmt.Sprintf("g/%d%%", i)
		rec, _ := json.Marshal(metadata.GroupRecord{ProtocolType: "consumer", Generation: int32(i)})
		ops := []metadata.Op{metadata.Put("groups/"+url.PathEscape(id), rec)}
		for p := range 2 {
			o, _ := json.Marshal(metadata.CommittedOffset{Offset: int64(i*10 + p), LeaderEpoch: -1})
			ops = append(ops, metadata.Put(fmt.Sprintf("offsets/%s/t/%010d", url.PathEscape(id), p), o))
		}
		if _, err := kv.Txn(context.Background(), nil, ops); err != nil {
			t.Fatal(err)
		}
	}
}

// checkMigrated: every group of writeUnsharded loads from its shard, with
// its offsets, and no unsharded key is left.
func checkMigrated(t *testing.T, kv metadata.KV, s *metadata.Store, n int) {
	t.Helper()
	ctx := context.Background()
	all, err := s.LoadGroups(ctx)
	if err != nil || len(all) != n {
		t.Fatalf("after migration: %d groups, err %v", len(all), err)
	}
	for _, g := range all {
		var i int
		fmt.Sscanf(g.ID, "g/%d%%", &i)
		if g.Record.Generation != int32(i) || len(g.Offsets) != 2 || g.Offsets[gp("t", 1)].Offset != int64(i*10+1) {
			t.Fatalf("group %q: %+v", g.ID, g)
		}
		shard, err := s.LoadShardGroups(ctx, metadata.GroupShard(g.ID))
		if err != nil || !hasGroup(shard, g.ID) {
			t.Fatalf("group %q not in its shard %d (%v)", g.ID, metadata.GroupShard(g.ID), err)
		}
	}
	for _, prefix := range []string{"groups/", "offsets/"} {
		items, _ := kv.Range(ctx, prefix, metadata.PrefixEnd(prefix), 0, false)
		for _, it := range items {
			if want := map[string]int{"groups/": 3, "offsets/": 5}[prefix]; len(strings.Split(it.Key, "/")) != want {
				t.Fatalf("key %q left unsharded", it.Key)
			}
		}
	}
}

func hasGroup(gs []metadata.StoredGroup, id string) bool {
	for _, g := range gs {
		if g.ID == id {
			return true
		}
	}
	return false
}

// TestMigrateGroupKeys: the groups and offsets of a store written before
// shards move under their shard, in transactions inside etcd's limits; a
// second run is one read.
func TestMigrateGroupKeys(t *testing.T) {
	ctx := context.Background()
	kv, _ := newBoltKV(t)
	const n = 130
	writeUnsharded(t, kv, n)
	counted := &migrationKV{KV: kv}
	s := metadata.NewStore(counted)
	moved, err := s.MigrateGroupKeys(ctx)
	if err != nil || moved != 3*n {
		t.Fatalf("migration: moved %d, err %v", moved, err)
	}
	if counted.maxConds > 128 || counted.maxOps > 128 || counted.txns < 3*n/50 {
		t.Fatalf("transactions: %d, at most %d conditions and %d writes", counted.txns, counted.maxConds, counted.maxOps)
	}
	checkMigrated(t, kv, s, n)
	counted.reads = 0
	if moved, err := s.MigrateGroupKeys(ctx); err != nil || moved != 0 || counted.reads != 1 {
		t.Fatalf("second run: moved %d, %d reads, err %v", moved, counted.reads, err)
	}
}

// TestMigrateGroupKeysResumes: a migration that fails half-way (the store
// fails a transaction) leaves every group readable by the next run, which
// finishes it; an unsharded key whose sharded twin was written since is
// dropped, not moved over the newer one.
func TestMigrateGroupKeysResumes(t *testing.T) {
	ctx := context.Background()
	kv, _ := newBoltKV(t)
	const n = 90
	writeUnsharded(t, kv, n)
	s := metadata.NewStore(kv)
	old, _ := json.Marshal(metadata.GroupRecord{ProtocolType: "consumer", Generation: 1})
	if _, err := kv.Txn(ctx, nil, []metadata.Op{metadata.Put("groups/late", old)}); err != nil {
		t.Fatal(err)
	}
	newer := metadata.GroupRecord{ProtocolType: "consumer", Generation: 1000}
	if _, err := s.WriteGroups(ctx, nil, nil, []metadata.GroupWrite{{Group: "late", Record: &newer}}); err != nil {
		t.Fatal(err)
	}
	failing := &migrationKV{KV: kv, failAt: 2}
	if _, err := metadata.NewStore(failing).MigrateGroupKeys(ctx); !errors.Is(err, errInjected) {
		t.Fatalf("first run: %v", err)
	}
	if _, err := s.MigrateGroupKeys(ctx); err != nil {
		t.Fatal(err)
	}
	all, err := s.LoadGroups(ctx)
	if err != nil || len(all) != n+1 {
		t.Fatalf("after the second run: %d groups, err %v", len(all), err)
	}
	for _, g := range all {
		if g.ID == "late" && g.Record.Generation != 1000 {
			t.Fatalf("the newer record was overwritten: %+v", g.Record)
		}
	}
}

var errInjected = errors.New("injected failure")

// migrationKV counts a KV's reads and transactions and can fail the
// failAt-th transaction.
type migrationKV struct {
	metadata.KV
	reads, txns, failAt int
	maxConds, maxOps    int
}

func (c *migrationKV) Get(ctx context.Context, key string) (metadata.Item, bool, error) {
	c.reads++
	return c.KV.Get(ctx, key)
}

func (c *migrationKV) Txn(ctx context.Context, conds []metadata.Cond, ops []metadata.Op) (int64, error) {
	c.txns++
	if c.txns == c.failAt {
		return 0, errInjected
	}
	c.maxConds, c.maxOps = max(c.maxConds, len(conds)), max(c.maxOps, len(ops))
	return c.KV.Txn(ctx, conds, ops)
}

// TestMigrateGroupKeysConcurrent: brokers starting together on an old
// store migrate it at once; every group ends up in its shard exactly once.
func TestMigrateGroupKeysConcurrent(t *testing.T) {
	kv, _ := newBoltKV(t)
	const n = 120
	writeUnsharded(t, kv, n)
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := metadata.NewStore(kv).MigrateGroupKeys(context.Background())
			errs <- err
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	checkMigrated(t, kv, metadata.NewStore(kv), n)
}
