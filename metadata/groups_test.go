package metadata_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/sediment-io/sediment/metadata"
)

func offsetAt(o int64) *metadata.CommittedOffset {
	return &metadata.CommittedOffset{Offset: o, LeaderEpoch: -1}
}

func gp(topic string, p int32) metadata.GroupPartition {
	return metadata.GroupPartition{Topic: topic, Partition: p}
}

// TestWriteGroups: records and offsets of many groups in one transaction;
// ids that are prefixes of each other (or hold '/') stay apart; deleting a
// group deletes its offsets only.
func TestWriteGroups(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	fence, err := s.ClaimGroups(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	versions := map[string]int64{}
	rec := &metadata.GroupRecord{ProtocolType: "consumer", Generation: 3, Members: []metadata.GroupMemberRecord{
		{MemberID: "m-1", Protocols: []metadata.GroupProtocol{{Name: "range", Metadata: []byte{1, 2}}}, Assignment: []byte{9}}}}
	writes := []metadata.GroupWrite{
		{Group: "a", Record: rec, Offsets: []metadata.OffsetWrite{{GroupPartition: gp("t", 0), Offset: offsetAt(5)}}},
		{Group: "a/b", Record: &metadata.GroupRecord{}, Offsets: []metadata.OffsetWrite{{GroupPartition: gp("t", 1), Offset: offsetAt(6)}}},
		{Group: "", Record: &metadata.GroupRecord{}, Offsets: []metadata.OffsetWrite{{GroupPartition: gp("u", 2), Offset: offsetAt(7)}}},
	}
	rev, err := s.WriteGroups(ctx, fence, versions, writes)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range writes {
		versions[w.Group] = rev
	}
	groups, err := s.LoadGroups(ctx)
	if err != nil || len(groups) != 3 {
		t.Fatalf("load: %d groups, err %v", len(groups), err)
	}
	byID := map[string]metadata.StoredGroup{}
	for _, g := range groups {
		byID[g.ID] = g
	}
	if a := byID["a"]; a.Version != rev || a.Record.Generation != 3 || len(a.Offsets) != 1 || a.Offsets[gp("t", 0)].Offset != 5 ||
		string(a.Record.Members[0].Protocols[0].Metadata) != "\x01\x02" {
		t.Fatalf("group a: %+v", a)
	}
	if len(byID["a/b"].Offsets) != 1 || byID[""].Offsets[gp("u", 2)].Offset != 7 {
		t.Fatalf("groups a/b and \"\": %+v %+v", byID["a/b"], byID[""])
	}

	if _, err := s.WriteGroups(ctx, fence, versions, []metadata.GroupWrite{{Group: "a", Delete: true}}); err != nil {
		t.Fatal(err)
	}
	delete(versions, "a")
	groups, _ = s.LoadGroups(ctx)
	if len(groups) != 2 || groups[0].ID != "" || groups[1].ID != "a/b" || len(groups[1].Offsets) != 1 {
		t.Fatalf("after deleting a: %+v", groups)
	}
}

// TestWriteGroupsConditions: a stale fence or record version changes
// nothing, and offsets never land without their group's record.
func TestWriteGroupsConditions(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	fence, _ := s.ClaimGroups(ctx, 0)
	put := []metadata.GroupWrite{{Group: "g", Record: &metadata.GroupRecord{}}}
	rev, err := s.WriteGroups(ctx, fence, nil, put)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteGroups(ctx, fence, nil, put); !metadata.IsConflict(err) {
		t.Fatalf("record write at a stale version: %v", err)
	}
	orphan := []metadata.GroupWrite{{Group: "h", Offsets: []metadata.OffsetWrite{{GroupPartition: gp("t", 0), Offset: offsetAt(1)}}}}
	if _, err := s.WriteGroups(ctx, fence, nil, orphan); !errors.Is(err, metadata.ErrGroupMissing) {
		t.Fatalf("offsets without a record: %v", err)
	}
	newer, err := s.ClaimGroups(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	offsets := []metadata.GroupWrite{{Group: "g", Offsets: []metadata.OffsetWrite{{GroupPartition: gp("t", 0), Offset: offsetAt(1)}}}}
	if _, err := s.WriteGroups(ctx, fence, map[string]int64{"g": rev}, offsets); !metadata.IsConflict(err) {
		t.Fatalf("write of a fenced coordinator: %v", err)
	}
	if _, err := s.WriteGroups(ctx, newer, map[string]int64{"g": rev}, offsets); err != nil {
		t.Fatalf("write of the new owner: %v", err)
	}
	if v, err := s.GroupVersion(ctx, "g"); err != nil || v != rev {
		t.Fatalf("group version %d (%v), want %d: offsets do not change the record", v, err, rev)
	}
}

// TestGroupShard: the shard of a group is FNV-1a 32 of its id mod 64,
// pinned here because it is part of the key layout.
func TestGroupShard(t *testing.T) {
	for id, want := range map[string]int32{"": 5, "g": 6, "orders-consumers": 48} {
		if got := metadata.GroupShard(id); got != want {
			t.Errorf("GroupShard(%q) = %d, want %d", id, got, want)
		}
	}
}

// TestShardFencedGroups: a write carrying a shard's fence lands while the
// shard's own key is at that version and changes nothing once it moved;
// LoadShardGroups returns the shard's groups only.
func TestShardFencedGroups(t *testing.T) {
	ctx := context.Background()
	kv, s := newBoltKV(t)
	a, b := idsInDistinctShards()
	own := func() metadata.Cond {
		key := fmt.Sprintf("own/shards/%03d", metadata.GroupShard(a))
		it, _, _ := kv.Get(ctx, key)
		rev, err := kv.Txn(ctx, []metadata.Cond{{Key: key, Version: it.Version}}, []metadata.Op{metadata.Put(key, []byte("{}"))})
		if err != nil {
			t.Fatal(err)
		}
		return metadata.Cond{Key: key, Version: rev}
	}
	fence := own()
	writes := []metadata.GroupWrite{
		{Group: a, Record: &metadata.GroupRecord{Generation: 2}, Offsets: []metadata.OffsetWrite{{GroupPartition: gp("t", 0), Offset: offsetAt(5)}}},
		{Group: b, Record: &metadata.GroupRecord{Generation: 9}},
	}
	rev, err := s.WriteGroups(ctx, []metadata.Cond{fence}, nil, writes)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.LoadShardGroups(ctx, metadata.GroupShard(a))
	if err != nil || len(got) != 1 || got[0].ID != a || got[0].Record.Generation != 2 || got[0].Offsets[gp("t", 0)].Offset != 5 {
		t.Fatalf("shard of %q: %+v err %v", a, got, err)
	}
	if ok, err := s.GroupFenceHolds(ctx, fence); !ok || err != nil {
		t.Fatalf("fence holds: %v %v", ok, err)
	}
	own() // the shard moves
	late := []metadata.GroupWrite{{Group: a, Offsets: []metadata.OffsetWrite{{GroupPartition: gp("t", 0), Offset: offsetAt(6)}}}}
	if _, err := s.WriteGroups(ctx, []metadata.Cond{fence}, map[string]int64{a: rev}, late); !metadata.IsConflict(err) {
		t.Fatalf("write behind a moved fence: %v", err)
	}
	if ok, err := s.GroupFenceHolds(ctx, fence); ok || err != nil {
		t.Fatalf("moved fence holds: %v %v", ok, err)
	}
	if got, _ := s.LoadShardGroups(ctx, metadata.GroupShard(a)); got[0].Offsets[gp("t", 0)].Offset != 5 {
		t.Fatalf("offset after the late write: %+v", got[0].Offsets)
	}
}

// idsInDistinctShards returns two group ids of different shards.
func idsInDistinctShards() (string, string) {
	for i := range 100 {
		b := fmt.Sprintf("group-%d", i)
		if metadata.GroupShard(b) != metadata.GroupShard("group-a") {
			return "group-a", b
		}
	}
	panic("every id in one shard")
}

func newBoltKV(t *testing.T) (metadata.KV, *metadata.Store) {
	t.Helper()
	kv, err := metadata.OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kv.Close() })
	return kv, metadata.NewStore(kv)
}

func pendingAt(o int64, epoch int16) *metadata.PendingOffset {
	return &metadata.PendingOffset{CommittedOffset: *offsetAt(o), ProducerEpoch: epoch}
}

// TestWriteGroupsTxnOffsets: offsets pending in transactions are stored
// by producer apart from the committed ones, loaded with their group,
// dropped per producer (producer ids that are decimal prefixes of each
// other stay apart) or one by one, never stored without the group's record,
// and deleted with the group.
func TestWriteGroupsTxnOffsets(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	fence, err := s.ClaimGroups(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	orphan := []metadata.GroupWrite{{Group: "h", TxnOffsets: []metadata.TxnOffsetWrite{{ProducerID: 1, GroupPartition: gp("t", 0), Offset: pendingAt(1, 0)}}}}
	if _, err := s.WriteGroups(ctx, fence, nil, orphan); !errors.Is(err, metadata.ErrGroupMissing) {
		t.Fatalf("pending offsets without a record: %v", err)
	}
	rev, err := s.WriteGroups(ctx, fence, nil, []metadata.GroupWrite{{Group: "g", Record: &metadata.GroupRecord{},
		Offsets: []metadata.OffsetWrite{{GroupPartition: gp("t", 0), Offset: offsetAt(5)}},
		TxnOffsets: []metadata.TxnOffsetWrite{
			{ProducerID: 1, GroupPartition: gp("t", 0), Offset: pendingAt(10, 3)},
			{ProducerID: 1, GroupPartition: gp("t", 1), Offset: pendingAt(11, 3)},
			{ProducerID: 10, GroupPartition: gp("t", 0), Offset: pendingAt(20, 0)},
		}}})
	if err != nil {
		t.Fatal(err)
	}
	versions := map[string]int64{"g": rev}
	load := func() metadata.StoredGroup {
		t.Helper()
		groups, err := s.LoadGroups(ctx)
		if err != nil || len(groups) != 1 {
			t.Fatalf("load: %+v, %v", groups, err)
		}
		return groups[0]
	}
	g := load()
	if g.Offsets[gp("t", 0)].Offset != 5 || len(g.TxnOffsets) != 2 || g.TxnOffsets[1][gp("t", 1)].Offset != 11 ||
		g.TxnOffsets[1][gp("t", 0)].ProducerEpoch != 3 || g.TxnOffsets[10][gp("t", 0)].Offset != 20 {
		t.Fatalf("stored: %+v", g)
	}
	sharded, err := s.LoadShardGroups(ctx, metadata.GroupShard("g"))
	if err != nil || len(sharded) != 1 || len(sharded[0].TxnOffsets) != 2 {
		t.Fatalf("shard load: %+v, %v", sharded, err)
	}
	// Producer 1 commits: its offsets become committed in the change that
	// drops them from the pending ones.
	commit := metadata.GroupWrite{Group: "g", DropTxn: []int64{1}, Offsets: []metadata.OffsetWrite{
		{GroupPartition: gp("t", 0), Offset: offsetAt(10)}, {GroupPartition: gp("t", 1), Offset: offsetAt(11)}}}
	if _, err := s.WriteGroups(ctx, fence, versions, []metadata.GroupWrite{commit}); err != nil {
		t.Fatal(err)
	}
	g = load()
	if len(g.Offsets) != 2 || g.Offsets[gp("t", 1)].Offset != 11 || len(g.TxnOffsets) != 1 || len(g.TxnOffsets[10]) != 1 {
		t.Fatalf("after producer 1's commit: %+v", g)
	}
	drop := metadata.GroupWrite{Group: "g", TxnOffsets: []metadata.TxnOffsetWrite{{ProducerID: 10, GroupPartition: gp("t", 0)}}}
	if _, err := s.WriteGroups(ctx, fence, versions, []metadata.GroupWrite{drop}); err != nil {
		t.Fatal(err)
	}
	if g = load(); len(g.TxnOffsets) != 0 {
		t.Fatalf("after deleting producer 10's offset: %+v", g.TxnOffsets)
	}
	again := metadata.GroupWrite{Group: "g", TxnOffsets: []metadata.TxnOffsetWrite{{ProducerID: 2, GroupPartition: gp("t", 0), Offset: pendingAt(1, 0)}}}
	if _, err := s.WriteGroups(ctx, fence, versions, []metadata.GroupWrite{again, {Group: "g", Delete: true}}); err != nil {
		t.Fatal(err)
	}
	if groups, err := s.LoadGroups(ctx); err != nil || len(groups) != 0 {
		t.Fatalf("after deleting the group: %+v, %v", groups, err)
	}
	recreated := []metadata.GroupWrite{{Group: "g", Record: &metadata.GroupRecord{}}}
	if _, err := s.WriteGroups(ctx, fence, nil, recreated); err != nil {
		t.Fatal(err)
	}
	if g = load(); len(g.TxnOffsets) != 0 || len(g.Offsets) != 0 {
		t.Fatalf("a group created again inherits %+v", g)
	}
}
