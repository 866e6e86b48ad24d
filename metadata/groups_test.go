package metadata_test

import (
	"context"
	"errors"
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
