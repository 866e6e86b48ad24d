package groupcoord

import (
	"testing"
	"time"
)

// staticPair makes a stable group of a dynamic leader and a static member
// "s-1", and returns both.
func (e *env) staticPair(group string) (leader, static joined) {
	e.t.Helper()
	a := e.c.Join(join(group, ""))
	b := e.c.Join(staticJoin(group, "", "s-1"))
	e.clock.Advance(0)
	leader, static = mustJoin(e.t, recv(e.t, a)), mustJoin(e.t, recv(e.t, b))
	e.sync(group, []joined{leader, static})
	return leader, static
}

// TestStaticMemberRestart: KIP-345. A static member joining again with no
// member id takes its old place with no rebalance: same generation, its
// old assignment, the leader unchanged; the old incarnation is fenced.
func TestStaticMemberRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	leader, old := e.staticPair("g")
	res := recv(t, e.c.Join(staticJoin("g", "", "s-1")))
	if res.Err != nil || res.Generation != old.gen || res.LeaderID != leader.id || res.MemberID == old.id || len(res.Members) != 0 {
		t.Fatalf("static rejoin: %+v", res)
	}
	if s := e.state("g"); s != StateStable {
		t.Fatalf("state %v: the restart rebalanced", s)
	}
	restarted := joined{res.MemberID, res.Generation}
	sync := recv(t, e.c.Sync(SyncRequest{Group: "g", MemberID: restarted.id, InstanceID: strPtr("s-1"), Generation: restarted.gen}))
	if sync.Err != nil || len(sync.Assignment) != 1 || sync.Assignment[0] != 1 {
		t.Fatalf("sync of the restarted member: %+v", sync)
	}
	inst := strPtr("s-1")
	wantErr(t, "heartbeat of the old incarnation",
		e.c.Heartbeat(HeartbeatRequest{Group: "g", MemberID: old.id, InstanceID: inst, Generation: old.gen}), ErrFencedInstance)
	commit := recv(t, e.c.Commit(CommitRequest{Group: "g", MemberID: old.id, InstanceID: inst, Generation: old.gen,
		Offsets: []CommitOffset{{Topic: "t", Partition: 0, Offset: 1}}}))
	wantErr(t, "commit of the old incarnation", commit.Err, ErrFencedInstance)
	wantErr(t, "leader heartbeat", e.heartbeat("g", leader), nil)
	wantErr(t, "restarted heartbeat", e.c.Heartbeat(HeartbeatRequest{Group: "g", MemberID: restarted.id, InstanceID: inst,
		Generation: restarted.gen}), nil)
}

// TestStaticMemberAbsentDuringRebalance: a static member that does not
// rejoin stays in the generation (it may be restarting) until its session
// times out.
func TestStaticMemberAbsentDuringRebalance(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	leader, static := e.staticPair("g")
	ch := e.c.Join(join("g", leader.id)) // the leader rejoins: a rebalance
	e.clock.Advance(5 * time.Second)     // the rebalance timeout
	res := recv(t, ch)
	if res.Err != nil || len(res.Members) != 2 {
		t.Fatalf("rebalance without the static member: %+v", res)
	}
	e.sync("g", []joined{{leader.id, res.Generation}})
	for range 10 {
		e.clock.Advance(time.Second)
		e.heartbeat("g", joined{leader.id, res.Generation})
	}
	wantErr(t, "static member after its session", e.c.Heartbeat(HeartbeatRequest{Group: "g", MemberID: static.id,
		InstanceID: strPtr("s-1"), Generation: res.Generation}), ErrUnknownMember)
}

// TestStaticLeaderSkipAssignment: KIP-814. A restarted static leader is
// told it leads but must not assign (v9+); older clients are given the old
// leader id so that they do not reassign.
func TestStaticLeaderSkipAssignment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.c.Join(staticJoin("g", "", "lead"))
	e.clock.Advance(0)
	old := mustJoin(t, recv(t, a))
	e.sync("g", []joined{old})

	res := recv(t, e.c.Join(staticJoin("g", "", "lead")))
	if res.Err != nil || res.LeaderID != old.id || res.SkipAssignment {
		t.Fatalf("pre-v9 static leader rejoin: %+v", res)
	}
	req := staticJoin("g", "", "lead")
	req.SupportsSkipAssignment = true
	res = recv(t, e.c.Join(req))
	if res.Err != nil || res.LeaderID != res.MemberID || !res.SkipAssignment || len(res.Members) != 1 || res.Generation != old.gen {
		t.Fatalf("v9 static leader rejoin: %+v", res)
	}
}
