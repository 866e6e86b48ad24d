package protocol

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestSyncGroupErrors(t *testing.T) {
	t.Parallel()
	b := startGroupBroker(t)
	c := b.dial()
	m := joinAlone(t, c, "g", []byte("a1"), "t")
	sync := func(what string, req *kmsg.SyncGroupRequest, want int16) *kmsg.SyncGroupResponse {
		t.Helper()
		resp := roundTrip[*kmsg.SyncGroupResponse](c, req)
		wantCode(t, what, resp.ErrorCode, want)
		return resp
	}
	resp := sync("stable", syncReq(5, "g", m.id, nil, m.gen, nil), 0)
	if string(resp.MemberAssignment) != "a1" || resp.Protocol == nil || *resp.Protocol != "range" {
		t.Fatalf("stable sync: %q %v", resp.MemberAssignment, resp.Protocol)
	}
	sync("stale generation", syncReq(5, "g", m.id, nil, m.gen-1, nil), kerr.IllegalGeneration.Code)
	sync("unknown member", syncReq(5, "g", "nobody", nil, m.gen, nil), kerr.UnknownMemberID.Code)
	sync("unknown group", syncReq(5, "nope", m.id, nil, m.gen, nil), kerr.UnknownMemberID.Code)
	sync("empty group id", syncReq(5, "", m.id, nil, m.gen, nil), kerr.InvalidGroupID.Code)
	wrong := syncReq(5, "g", m.id, nil, m.gen, nil)
	wrong.Protocol = ptr("roundrobin")
	sync("other protocol", wrong, kerr.InconsistentGroupProtocol.Code)

	join := b.goRoundTrip(joinReq(3, "g", "", nil, "t"))
	awaitRebalance(t, c, "g", m)
	sync("during a rebalance", syncReq(5, "g", m.id, nil, m.gen, nil), kerr.RebalanceInProgress.Code)
	rejoin := roundTrip[*kmsg.JoinGroupResponse](c, joinReq(9, "g", m.id, nil, "t"))
	other := await[*kmsg.JoinGroupResponse](t, join)
	// The follower's SyncGroup waits for the leader's assignment.
	follower := b.goRoundTrip(syncReq(3, "g", other.MemberID, nil, other.Generation, nil))
	sync("leader", syncReq(5, "g", rejoin.MemberID, nil, rejoin.Generation,
		map[string][]byte{rejoin.MemberID: []byte("a2"), other.MemberID: []byte("b2")}), 0)
	if got := await[*kmsg.SyncGroupResponse](t, follower); got.ErrorCode != 0 || string(got.MemberAssignment) != "b2" {
		t.Fatalf("follower: %s %q", errName(got.ErrorCode), got.MemberAssignment)
	}
}
