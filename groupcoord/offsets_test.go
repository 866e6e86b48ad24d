package groupcoord

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sediment-io/sediment/metadata"
)

// commit commits offsets (partition p gets offsets[p]) of topic "t".
func (e *env) commit(group string, m joined, instance *string, offsets ...int64) CommitResult {
	e.t.Helper()
	req := CommitRequest{Group: group, MemberID: m.id, InstanceID: instance, Generation: m.gen}
	for p, o := range offsets {
		req.Offsets = append(req.Offsets, CommitOffset{Topic: "t", Partition: int32(p), Offset: o, LeaderEpoch: 3})
	}
	return recv(e.t, e.c.Commit(req))
}

// fetched returns the committed offsets of partitions 0-3 of "t".
func (e *env) fetched(group string) []int64 {
	e.t.Helper()
	res := recv(e.t, e.c.FetchOffsets(FetchRequest{Group: group, Topics: []FetchTopic{{Topic: "t", Partitions: []int32{0, 1, 2, 3}}}}))
	if res.Err != nil {
		e.t.Fatalf("fetch: %v", res.Err)
	}
	var out []int64
	for _, p := range res.Topics[0].Partitions {
		out = append(out, p.Offset)
	}
	return out
}

func fmtOffsets(os []int64) string {
	var b strings.Builder
	for i, o := range os {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(o, 10))
	}
	return b.String()
}

func TestCommitStandalone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	standalone := joined{"", -1}
	if res := e.commit("solo", standalone, nil, 5, 6); res.Err != nil || res.Partitions[0] != nil || res.Partitions[1] != nil {
		t.Fatalf("standalone commit: %+v", res)
	}
	if got := fmtOffsets(e.fetched("solo")); got != "5,6,-1,-1" {
		t.Fatalf("fetched %s", got)
	}
	if res := e.commit("", standalone, nil, 1); res.Err != nil { // Kafka takes the empty group id for commits
		t.Fatalf("commit to the empty group id: %+v", res)
	}
	wantErr(t, "generation for an unknown group", e.commit("nope", joined{"m", 1}, nil, 1).Err, ErrIllegalGeneration)
	res := recv(t, e.c.Commit(CommitRequest{Group: "nope", MemberID: "m", Generation: 1, GroupNotFoundError: true,
		Offsets: []CommitOffset{{Topic: "t", Offset: 1}}}))
	wantErr(t, "generation for an unknown group (v9+)", res.Err, ErrGroupNotFound)
}

// TestCommitChecks: stale generations, unknown members, commits while the
// generation completes, oversized metadata and unknown partitions, each
// refused with its error and nothing else disturbed.
func TestCommitChecks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "offset.metadata.max.bytes", "8")
	ms := e.stableGroup("g", 2)
	if res := e.commit("g", ms[0], nil, 10, 11); res.Err != nil || res.Partitions[0] != nil {
		t.Fatalf("member commit: %+v", res)
	}
	wantErr(t, "stale generation", e.commit("g", joined{ms[0].id, ms[0].gen - 1}, nil, 1).Err, ErrIllegalGeneration)
	wantErr(t, "unknown member", e.commit("g", joined{"nobody", ms[0].gen}, nil, 1).Err, ErrUnknownMember)
	wantErr(t, "standalone commit to a group in use", e.commit("g", joined{"", -1}, nil, 1).Err, ErrUnknownMember)
	long, short := "0123456789", "ok"
	res := recv(t, e.c.Commit(CommitRequest{Group: "g", MemberID: ms[0].id, Generation: ms[0].gen, Offsets: []CommitOffset{
		{Topic: "t", Partition: 0, Offset: 20, Metadata: &long},
		{Topic: "t", Partition: 1, Offset: 21, Metadata: &short},
		{Topic: "gone", Partition: 0, Offset: 22},
		{Topic: "t", Partition: 9, Offset: 23},
	}}))
	if res.Err != nil || res.Partitions[0] != ErrMetadataTooLarge || res.Partitions[1] != nil ||
		res.Partitions[2] != ErrUnknownTopicOrPartition || res.Partitions[3] != ErrUnknownTopicOrPartition {
		t.Fatalf("mixed commit: %+v", res)
	}
	if got := fmtOffsets(e.fetched("g")); got != "10,21,-1,-1" {
		t.Fatalf("fetched %s", got)
	}

	e.c.Join(join("g", "")) // a newcomer: PreparingRebalance
	if res := e.commit("g", ms[1], nil, 30); res.Err != nil {
		t.Fatalf("commit while preparing a rebalance: %+v", res)
	}
	l, f := e.c.Join(join("g", ms[0].id)), e.c.Join(join("g", ms[1].id))
	e.clock.Advance(0)
	rl, rf := mustJoin(t, recv(t, l)), mustJoin(t, recv(t, f))
	wantErr(t, "commit while completing", e.commit("g", rf, nil, 40).Err, ErrRebalanceInProgress)
	wantErr(t, "commit with the old generation", e.commit("g", ms[1], nil, 40).Err, ErrIllegalGeneration)
	_ = rl
}

func TestFetchAllAndStable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.cluster.setTopic("u", 2)
	e.commit("g", joined{"", -1}, nil, 1, 2)
	recv(t, e.c.Commit(CommitRequest{Group: "g", Generation: -1, Offsets: []CommitOffset{{Topic: "u", Partition: 1, Offset: 7}}}))
	res := recv(t, e.c.FetchOffsets(FetchRequest{Group: "g", RequireStable: true}))
	if res.Err != nil || len(res.Topics) != 2 || res.Topics[0].Topic != "t" || len(res.Topics[0].Partitions) != 2 ||
		res.Topics[1].Partitions[0].Offset != 7 || res.Topics[0].Partitions[0].LeaderEpoch != 3 {
		t.Fatalf("fetch all: %+v", res)
	}
	if res := recv(t, e.c.FetchOffsets(FetchRequest{Group: "unknown"})); res.Err != nil || len(res.Topics) != 0 {
		t.Fatalf("fetch all of an unknown group: %+v", res)
	}
}

// TestDeletedTopicOffsets: offsets of a deleted topic are never served,
// not even once a topic of the same name exists again, and cleanup drops
// them.
func TestDeletedTopicOffsets(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.commit("g", joined{"", -1}, nil, 1, 2)
	e.cluster.deleteTopic("t")
	if got := fmtOffsets(e.fetched("g")); got != "-1,-1,-1,-1" {
		t.Fatalf("offsets of a deleted topic: %s", got)
	}
	e.cluster.setTopic("t", 4)
	if got := fmtOffsets(e.fetched("g")); got != "-1,-1,-1,-1" {
		t.Fatalf("offsets of a recreated topic: %s", got)
	}
	e.c.cleanup()
	if res := recv(t, e.c.FetchOffsets(FetchRequest{Group: "g"})); len(res.Topics) != 0 {
		t.Fatalf("fetch all after cleanup: %+v", res)
	}
	e.restart()
	if len(e.c.List(nil)) != 0 {
		t.Fatalf("groups after cleanup and restart: %+v", e.c.List(nil))
	}
}

// TestOffsetRetention: offsets.retention.minutes. Standalone commits expire
// each after its commit; a consumer group's, together, after the group
// emptied; an empty group without offsets is deleted.
func TestOffsetRetention(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "offsets.retention.minutes", "1")
	e.commit("solo", joined{"", -1}, nil, 1)
	ms := e.stableGroup("g", 1)
	e.commit("g", ms[0], nil, 5)
	for range 3 {
		e.clock.Advance(9 * time.Second)
		wantErr(t, "heartbeat", e.heartbeat("g", ms[0]), nil)
	}
	recv(t, e.c.Commit(CommitRequest{Group: "solo", Generation: -1, Offsets: []CommitOffset{{Topic: "t", Partition: 1, Offset: 2}}}))
	e.c.Leave("g", []LeaveMember{{MemberID: ms[0].id}}) // empty from now (t=27s)
	e.clock.Advance(40 * time.Second)
	e.c.cleanup()
	if got := fmtOffsets(e.fetched("g")); got != "5,-1,-1,-1" {
		t.Fatalf("consumer group offsets 40 s after it emptied: %s", got)
	}
	if got := fmtOffsets(e.fetched("solo")); got != "-1,2,-1,-1" {
		t.Fatalf("standalone offsets committed 67 s and 40 s ago: %s", got)
	}
	e.clock.Advance(21 * time.Second)
	e.c.cleanup()
	if got := fmtOffsets(e.fetched("g")); got != "-1,-1,-1,-1" {
		t.Fatalf("consumer group offsets 61 s after it emptied: %s", got)
	}
	if l := e.c.List(nil); len(l) != 0 {
		t.Fatalf("groups left without offsets: %+v", l)
	}
	e.restart()
	if l := e.c.List(nil); len(l) != 0 {
		t.Fatalf("groups after a restart: %+v", l)
	}
}

// TestDeleteGroupsAndOffsets: DeleteGroups and OffsetDelete, durably.
func TestDeleteGroupsAndOffsets(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.cluster.setTopic("u", 1)
	ms := e.stableGroup("g", 1)
	e.commit("g", ms[0], nil, 1)
	recv(t, e.c.Commit(CommitRequest{Group: "g", MemberID: ms[0].id, Generation: ms[0].gen,
		Offsets: []CommitOffset{{Topic: "u", Partition: 0, Offset: 9}}}))
	errs := recv(t, e.c.DeleteGroups([]string{"g", "nope", ""}))
	if errs[0] != ErrNonEmptyGroup || errs[1] != ErrGroupNotFound || errs[2] != ErrInvalidGroupID {
		t.Fatalf("delete groups: %v", errs)
	}
	del := recv(t, e.c.DeleteOffsets("g", []metadata.GroupPartition{{Topic: "t", Partition: 0}, {Topic: "u", Partition: 0},
		{Topic: "x", Partition: 0}}))
	if del.Err != nil || del.Partitions[0] != ErrSubscribedToTopic || del.Partitions[1] != nil || del.Partitions[2] != ErrUnknownTopicOrPartition {
		t.Fatalf("delete offsets: %+v", del)
	}
	wantErr(t, "delete offsets of an unknown group", recv(t, e.c.DeleteOffsets("nope", nil)).Err, ErrGroupNotFound)
	e.c.Leave("g", []LeaveMember{{MemberID: ms[0].id}})
	if errs := recv(t, e.c.DeleteGroups([]string{"g"})); errs[0] != nil {
		t.Fatalf("delete of the empty group: %v", errs)
	}
	e.restart()
	if got := fmtOffsets(e.fetched("g")); got != "-1,-1,-1,-1" || len(e.c.List(nil)) != 0 {
		t.Fatalf("after deletion and restart: offsets %s, groups %+v", got, e.c.List(nil))
	}
}
