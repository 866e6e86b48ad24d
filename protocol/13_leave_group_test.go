package protocol

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestLeaveGroupBatch: v3+ removes several members at once, each with its
// own error, by member id or by instance id alone; v0 answers its one
// member's error at the top.
func TestLeaveGroupBatch(t *testing.T) {
	t.Parallel()
	b := startGroupBroker(t)
	c := b.dial()
	var chans []<-chan kmsg.Response
	for _, inst := range []string{"a", "b", "c"} {
		chans = append(chans, b.goRoundTrip(joinReq(9, "g", "", ptr(inst), "t")))
	}
	ids := map[string]string{}
	for i, ch := range chans {
		resp := await[*kmsg.JoinGroupResponse](t, ch)
		wantCode(t, "join", resp.ErrorCode, 0)
		ids[[]string{"a", "b", "c"}[i]] = resp.MemberID
	}
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version, req.Group = 5, "g"
	req.Members = []kmsg.LeaveGroupRequestMember{
		{MemberID: ids["a"], InstanceID: ptr("a"), Reason: ptr("test")},
		{InstanceID: ptr("b")}, // by instance id alone
		{MemberID: "wrong", InstanceID: ptr("c")},
		{MemberID: "nobody"},
	}
	resp := roundTrip[*kmsg.LeaveGroupResponse](c, req)
	wantCode(t, "leave", resp.ErrorCode, 0)
	want := []int16{0, 0, kerr.FencedInstanceID.Code, kerr.UnknownMemberID.Code}
	for i, m := range resp.Members {
		wantCode(t, "member "+m.MemberID, m.ErrorCode, want[i])
	}
	v0 := kmsg.NewPtrLeaveGroupRequest()
	v0.Version, v0.Group, v0.MemberID = 0, "g", ids["c"]
	wantCode(t, "v0 leave", roundTrip[*kmsg.LeaveGroupResponse](c, v0).ErrorCode, 0)
	wantCode(t, "v0 leave again", roundTrip[*kmsg.LeaveGroupResponse](c, v0).ErrorCode, kerr.UnknownMemberID.Code)
	v0.Group = ""
	wantCode(t, "empty group id", roundTrip[*kmsg.LeaveGroupResponse](c, v0).ErrorCode, kerr.InvalidGroupID.Code)
	describe := kmsg.NewPtrDescribeGroupsRequest()
	describe.Groups = []string{"g"}
	if g := roundTrip[*kmsg.DescribeGroupsResponse](c, describe).Groups[0]; g.State != "Empty" || len(g.Members) != 0 {
		t.Fatalf("after everyone left: %s with %d members", g.State, len(g.Members))
	}
}
