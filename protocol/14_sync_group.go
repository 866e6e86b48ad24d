package protocol

// SyncGroup v0–v5. The leader sends the assignment of the generation; every
// member gets its own once the assignment is durable (a restarted broker
// resumes the group from it). The wait runs on the writer (request.wait).
// v3+ carries group.instance.id (a replaced static member is fenced:
// FENCED_INSTANCE_ID); v5+ carries the protocol type and name, which must be
// the group's (INCONSISTENT_GROUP_PROTOCOL), and echoes them.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/groupcoord"
)

func init() { register(kmsg.SyncGroup, 0, 5, handleSyncGroup) }

func handleSyncGroup(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.SyncGroupRequest)
	resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
	r.wait = func() { r.syncGroup(req, resp) }
	return resp, nil
}

func (r *request) syncGroup(req *kmsg.SyncGroupRequest, resp *kmsg.SyncGroupResponse) {
	sr := groupcoord.SyncRequest{Group: req.Group, MemberID: req.MemberID, InstanceID: req.InstanceID,
		Generation: req.Generation, ProtocolType: req.ProtocolType, Protocol: req.Protocol}
	if len(req.GroupAssignment) > 0 {
		sr.Assignments = make(map[string][]byte, len(req.GroupAssignment))
		for _, a := range req.GroupAssignment {
			sr.Assignments[a.MemberID] = a.MemberAssignment
		}
	}
	res := groupcoord.SyncResult{Err: groupcoord.ErrCoordinatorNotAvailable}
	if r.s.groups != nil {
		res, _ = awaitGroup(r, r.s.groups.Sync(sr), res)
	}
	resp.ErrorCode = r.codeOf(res.Err)
	if res.Err != nil {
		return
	}
	resp.ProtocolType, resp.Protocol = &res.ProtocolType, &res.Protocol
	resp.MemberAssignment = res.Assignment
}
