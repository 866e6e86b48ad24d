package protocol

// LeaveGroup v0–v5: members leave at once and the rest rebalance (no wait
// for a session timeout). v0–v2 name one member, whose error is the
// top-level error; v3+ batch members, each with its own error (KIP-345),
// and may name a static member by group.instance.id alone (the admin
// client's remove-members); v5+ carries a reason per member, which is
// logged. It runs on the writer (request.wait), in order with the
// connection's other requests.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/groupcoord"
)

func init() { register(kmsg.LeaveGroup, 0, 5, handleLeaveGroup) }

func handleLeaveGroup(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.LeaveGroupRequest)
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	r.wait = func() { r.leaveGroup(req, resp) }
	return resp, nil
}

func (r *request) leaveGroup(req *kmsg.LeaveGroupRequest, resp *kmsg.LeaveGroupResponse) {
	members := req.Members
	if req.Version < 3 {
		members = []kmsg.LeaveGroupRequestMember{{MemberID: req.MemberID}}
	}
	leaving := make([]groupcoord.LeaveMember, len(members))
	for i, m := range members {
		leaving[i] = groupcoord.LeaveMember{MemberID: m.MemberID, InstanceID: m.InstanceID}
		if m.Reason != nil {
			leaving[i].Reason = *m.Reason
		}
	}
	errs, err := []error(nil), error(groupcoord.ErrCoordinatorNotAvailable)
	if r.s.groups != nil {
		errs, err = r.s.groups.Leave(req.Group, leaving)
	}
	if err != nil {
		resp.ErrorCode = r.codeOf(err)
		return
	}
	if req.Version < 3 {
		resp.ErrorCode = r.codeOf(errs[0])
		return
	}
	for i, m := range members {
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID, rm.InstanceID, rm.ErrorCode = m.MemberID, m.InstanceID, r.codeOf(errs[i])
		resp.Members = append(resp.Members, rm)
	}
}
