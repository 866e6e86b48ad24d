package groupcoord

import (
	"testing"
	"time"
)

func TestJoinSyncHeartbeat(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ch := e.c.Join(join("g", ""))
	notYet(t, ch, "join during the initial delay")
	if s := e.state("g"); s != StatePreparingRebalance {
		t.Fatalf("state %v", s)
	}
	e.clock.Advance(0)
	res := recv(t, ch)
	m := mustJoin(t, res)
	if m.gen != 1 || res.LeaderID != m.id || len(res.Members) != 1 || res.Protocol != "range" || res.ProtocolType != "consumer" {
		t.Fatalf("join result %+v", res)
	}
	if s := e.state("g"); s != StateCompletingRebalance {
		t.Fatalf("state after join %v", s)
	}
	wantErr(t, "heartbeat while completing", e.heartbeat("g", m), nil)
	e.sync("g", []joined{m})
	if s := e.state("g"); s != StateStable {
		t.Fatalf("state after sync %v", s)
	}
	wantErr(t, "heartbeat", e.heartbeat("g", m), nil)
	wantErr(t, "stale generation", e.heartbeat("g", joined{m.id, 0}), ErrIllegalGeneration)
	wantErr(t, "unknown member", e.heartbeat("g", joined{"nobody", 1}), ErrUnknownMember)
	wantErr(t, "unknown group", e.heartbeat("nope", m), ErrUnknownMember)
	wantErr(t, "empty group id", e.heartbeat("", m), ErrInvalidGroupID)
	again := recv(t, e.c.Sync(SyncRequest{Group: "g", MemberID: m.id, Generation: 1}))
	if again.Err != nil || again.Assignment[0] != 0 {
		t.Fatalf("sync in Stable: %+v", again)
	}
	proto := "roundrobin"
	wantErr(t, "sync with another protocol", recv(t, e.c.Sync(SyncRequest{Group: "g", MemberID: m.id, Generation: 1, Protocol: &proto})).Err,
		ErrInconsistentProtocol)
}

// TestInitialRebalanceDelay: the first rebalance of an empty group waits
// group.initial.rebalance.delay.ms, once more for each new member, up to
// the rebalance timeout.
func TestInitialRebalanceDelay(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "group.initial.rebalance.delay.ms", "3000")
	a := e.c.Join(join("g", ""))
	e.clock.Advance(2 * time.Second)
	b := e.c.Join(join("g", ""))
	e.clock.Advance(time.Second)
	notYet(t, a, "join after one delay with a member added in it")
	e.clock.Advance(time.Second)
	notYet(t, a, "join within the extended delay")
	e.clock.Advance(time.Second) // the rebalance timeout (5 s) bounds the delays
	ra, rb := recv(t, a), recv(t, b)
	if ra.Err != nil || rb.Err != nil || ra.Generation != 1 || len(ra.Members)+len(rb.Members) != 2 {
		t.Fatalf("joins: %+v %+v", ra, rb)
	}
}

// TestSessionExpiryRebalances: a member that stops heartbeating is removed
// after its session timeout and the rest rebalance without it.
func TestSessionExpiryRebalances(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ms := e.stableGroup("g", 2)
	for range 9 {
		e.clock.Advance(time.Second)
		wantErr(t, "heartbeat of the live member", e.heartbeat("g", ms[0]), nil)
	}
	e.clock.Advance(time.Second) // the other's 10 s session ends
	wantErr(t, "heartbeat after the expiry", e.heartbeat("g", ms[0]), ErrRebalanceInProgress)
	wantErr(t, "heartbeat of the expired member", e.heartbeat("g", ms[1]), ErrUnknownMember)
	res := recv(t, e.c.Join(join("g", ms[0].id)))
	if res.Err != nil || res.Generation != 2 || len(res.Members) != 1 {
		t.Fatalf("rejoin: %+v", res)
	}
}

// TestRebalanceTimeoutRemovesLaggard: a member that keeps heartbeating but
// does not rejoin within the rebalance timeout (max.poll.interval.ms) is
// removed; the JoinGroup of the others completes without it.
func TestRebalanceTimeoutRemovesLaggard(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ms := e.stableGroup("g", 2)
	newcomer := e.c.Join(join("g", ""))
	leader := e.c.Join(join("g", ms[0].id))
	for range 4 {
		e.clock.Advance(time.Second)
		wantErr(t, "laggard heartbeat", e.heartbeat("g", ms[1]), ErrRebalanceInProgress)
	}
	notYet(t, leader, "join before the rebalance timeout")
	e.clock.Advance(time.Second)
	rl, rn := recv(t, leader), recv(t, newcomer)
	if rl.Err != nil || rn.Err != nil || len(rl.Members) != 2 || rl.Generation != 2 {
		t.Fatalf("joins: %+v / %+v", rl, rn)
	}
	for _, m := range rl.Members {
		if m.MemberID == ms[1].id {
			t.Fatal("the laggard is in the new generation")
		}
	}
	wantErr(t, "laggard heartbeat after", e.heartbeat("g", ms[1]), ErrUnknownMember)
	wantErr(t, "laggard rejoin", recv(t, e.c.Join(join("g", ms[1].id))).Err, ErrUnknownMember)
}

// TestSyncDeadline: a member that gets the new generation but never sends
// SyncGroup is removed after the rebalance timeout.
func TestSyncDeadline(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ms := e.stableGroup("g", 2)
	a := e.c.Join(join("g", ms[0].id))
	b := e.c.Join(join("g", ms[1].id))
	ra, rb := mustJoin(t, recv(t, a)), mustJoin(t, recv(t, b))
	e.sync("g", []joined{ra}) // only the leader syncs
	e.clock.Advance(5 * time.Second)
	wantErr(t, "heartbeat after the sync deadline", e.heartbeat("g", ra), ErrRebalanceInProgress)
	wantErr(t, "the silent member", e.heartbeat("g", rb), ErrUnknownMember)
}

// TestMemberIDRequired: KIP-394. A member id handed out is waited for by
// a rebalance until it joins or its session timeout passes.
func TestMemberIDRequired(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ms := e.stableGroup("g", 1)
	req := join("g", "")
	req.RequireKnownMemberID = true
	first := recv(t, e.c.Join(req))
	wantErr(t, "first join", first.Err, ErrMemberIDRequired)
	if first.MemberID == "" {
		t.Fatal("no member id handed out")
	}
	leader := e.c.Join(join("g", ms[0].id)) // the leader rejoins: a rebalance
	e.clock.Advance(4 * time.Second)
	notYet(t, leader, "rebalance while a handed-out member id is pending")
	e.clock.Advance(time.Second) // the rebalance timeout
	res := recv(t, leader)
	if res.Err != nil || len(res.Members) != 1 {
		t.Fatalf("leader after the rebalance timeout: %+v", res)
	}
	e.sync("g", []joined{mustJoin(t, res)})
	e.clock.Advance(5 * time.Second) // the pending id's session timeout
	wantErr(t, "joining with the expired id", recv(t, e.c.Join(join("g", first.MemberID))).Err, ErrUnknownMember)

	// A pending member that joins completes the rebalance at once.
	again := recv(t, e.c.Join(req))
	wantErr(t, "first join", again.Err, ErrMemberIDRequired)
	leader = e.c.Join(join("g", ms[0].id))
	newcomer := recv(t, e.c.Join(join("g", again.MemberID)))
	if res := recv(t, leader); res.Err != nil || newcomer.Err != nil || len(res.Members) != 2 {
		t.Fatalf("joins: %+v / %+v", res, newcomer)
	}
}

func TestLeaveBatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ms := e.stableGroup("g", 3)
	errs, err := e.c.Leave("g", []LeaveMember{{MemberID: ms[1].id}, {MemberID: "nobody"}, {MemberID: ms[2].id, Reason: "shutting down"}})
	if err != nil || errs[0] != nil || errs[1] != ErrUnknownMember || errs[2] != nil {
		t.Fatalf("leave: %v %v", errs, err)
	}
	wantErr(t, "remaining member", e.heartbeat("g", ms[0]), ErrRebalanceInProgress)
	res := recv(t, e.c.Join(join("g", ms[0].id)))
	if res.Err != nil || len(res.Members) != 1 {
		t.Fatalf("rejoin: %+v", res)
	}
	errs, err = e.c.Leave("g", []LeaveMember{{MemberID: ms[0].id}})
	if err != nil || errs[0] != nil || e.state("g") != StateEmpty {
		t.Fatalf("last leave: %v %v, state %v", errs, err, e.state("g"))
	}
	if _, err := e.c.Leave("", nil); err != ErrInvalidGroupID {
		t.Fatalf("leave of the empty group id: %v", err)
	}
	errs, _ = e.c.Leave("nope", []LeaveMember{{MemberID: "x"}})
	wantErr(t, "leave of an unknown group", errs[0], ErrUnknownMember)
}

func TestJoinChecks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "group.max.size", "1", "group.min.session.timeout.ms", "6000")
	short := join("g", "")
	short.SessionTimeout = time.Second
	wantErr(t, "short session", recv(t, e.c.Join(short)).Err, ErrInvalidSessionTimeout)
	wantErr(t, "empty group id", recv(t, e.c.Join(join("", ""))).Err, ErrInvalidGroupID)
	wantErr(t, "unknown member of an unknown group", recv(t, e.c.Join(join("g", "x"))).Err, ErrUnknownMember)
	e.stableGroup("g", 1)
	wantErr(t, "beyond group.max.size", recv(t, e.c.Join(join("g", ""))).Err, ErrGroupMaxSize)
	other := join("g", "")
	other.ProtocolType = "connect"
	wantErr(t, "other protocol type", recv(t, e.c.Join(other)).Err, ErrInconsistentProtocol)
}

func TestProtocolSelection(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mk := func(names ...string) JoinRequest {
		r := join("g", "")
		r.Protocols = nil
		for _, n := range names {
			r.Protocols = append(r.Protocols, Protocol{Name: n, Metadata: []byte(n)})
		}
		return r
	}
	a := e.c.Join(mk("sticky", "range", "roundrobin"))
	b := e.c.Join(mk("range", "sticky"))
	c := e.c.Join(mk("range", "roundrobin", "sticky"))
	e.clock.Advance(0)
	for _, ch := range []<-chan JoinResult{a, b, c} {
		if res := recv(t, ch); res.Err != nil || res.Protocol != "range" {
			t.Fatalf("join: %+v", res)
		}
	}
}

// TestCloseAnswersWaiters: a JoinGroup waiting when the coordinator closes
// is answered NOT_COORDINATOR.
func TestCloseAnswersWaiters(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "group.initial.rebalance.delay.ms", "3000")
	ch := e.c.Join(join("g", ""))
	e.c.Close()
	wantErr(t, "waiting join", recv(t, ch).Err, ErrNotCoordinator)
	wantErr(t, "join after close", recv(t, e.c.Join(join("g", ""))).Err, ErrNotCoordinator)
}
