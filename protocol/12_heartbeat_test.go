package protocol

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestHeartbeatErrors: the codes a member learns from heartbeats.
func TestHeartbeatErrors(t *testing.T) {
	t.Parallel()
	b := startGroupBroker(t)
	c := b.dial()
	m := joinAlone(t, c, "g", nil, "t")
	hb := func(what, group, member string, instance *string, gen int32, want int16) {
		t.Helper()
		wantCode(t, what, roundTrip[*kmsg.HeartbeatResponse](c, heartbeatReq(group, member, instance, gen)).ErrorCode, want)
	}
	hb("member", "g", m.id, nil, m.gen, 0)
	hb("stale generation", "g", m.id, nil, m.gen-1, kerr.IllegalGeneration.Code)
	hb("unknown member", "g", "nobody", nil, m.gen, kerr.UnknownMemberID.Code)
	hb("unknown group", "nope", m.id, nil, m.gen, kerr.UnknownMemberID.Code)
	hb("empty group id", "", m.id, nil, m.gen, kerr.InvalidGroupID.Code)

	join := b.goRoundTrip(joinReq(3, "g", "", nil, "t")) // a newcomer: a rebalance
	awaitRebalance(t, c, "g", m)
	hb("during a rebalance", "g", m.id, nil, m.gen, kerr.RebalanceInProgress.Code)
	rejoin := roundTrip[*kmsg.JoinGroupResponse](c, joinReq(9, "g", m.id, nil, "t"))
	wantCode(t, "rejoin", rejoin.ErrorCode, 0)
	wantCode(t, "newcomer", await[*kmsg.JoinGroupResponse](t, join).ErrorCode, 0)
	hb("new generation while completing", "g", m.id, nil, rejoin.Generation, 0)
	hb("old generation", "g", m.id, nil, m.gen, kerr.IllegalGeneration.Code)
}

// TestStaticMemberFenced: a static member that restarts replaces its old
// incarnation with no rebalance; the old one is FENCED_INSTANCE_ID.
func TestStaticMemberFenced(t *testing.T) {
	t.Parallel()
	b := startGroupBroker(t)
	c := b.dial()
	inst := ptr("static-1")
	first := roundTrip[*kmsg.JoinGroupResponse](c, joinReq(9, "g", "", inst, "t"))
	wantCode(t, "static join", first.ErrorCode, 0)
	sync := roundTrip[*kmsg.SyncGroupResponse](c, syncReq(5, "g", first.MemberID, inst, first.Generation,
		map[string][]byte{first.MemberID: []byte("mine")}))
	wantCode(t, "sync", sync.ErrorCode, 0)

	second := roundTrip[*kmsg.JoinGroupResponse](b.dial(), joinReq(9, "g", "", inst, "t"))
	wantCode(t, "restarted static join", second.ErrorCode, 0)
	if second.Generation != first.Generation || second.MemberID == first.MemberID || !second.SkipAssignment {
		t.Fatalf("restart: generation %d (was %d), member %s, skip %v", second.Generation, first.Generation, second.MemberID, second.SkipAssignment)
	}
	resync := roundTrip[*kmsg.SyncGroupResponse](c, syncReq(5, "g", second.MemberID, inst, second.Generation, nil))
	if resync.ErrorCode != 0 || string(resync.MemberAssignment) != "mine" {
		t.Fatalf("restarted sync: %s %q", errName(resync.ErrorCode), resync.MemberAssignment)
	}
	wantCode(t, "old heartbeat", roundTrip[*kmsg.HeartbeatResponse](c, heartbeatReq("g", first.MemberID, inst, first.Generation)).ErrorCode,
		kerr.FencedInstanceID.Code)
	commit := commitReq(8, "g", first.MemberID, first.Generation, "t", 1, 0)
	commit.InstanceID = inst
	b.createTopic("t", 1, nil)
	wantCodes(t, "old commit", commitCodes(roundTrip[*kmsg.OffsetCommitResponse](c, commit)), kerr.FencedInstanceID.Code)
	wantCode(t, "old rejoin", roundTrip[*kmsg.JoinGroupResponse](c, joinReq(9, "g", first.MemberID, inst, "t")).ErrorCode,
		kerr.FencedInstanceID.Code)
	wantCode(t, "new heartbeat", roundTrip[*kmsg.HeartbeatResponse](c, heartbeatReq("g", second.MemberID, inst, second.Generation)).ErrorCode, 0)
}
