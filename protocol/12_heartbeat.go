package protocol

// Heartbeat v0–v4: keeps a member's session (session.timeout.ms) alive.
// During a rebalance it answers REBALANCE_IN_PROGRESS, which is how members
// learn that they must rejoin. v3+ carries group.instance.id (a replaced
// static member is fenced: FENCED_INSTANCE_ID). It runs on the writer
// (request.wait), in order with the connection's other requests.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/groupcoord"
)

func init() { register(kmsg.Heartbeat, 0, 4, handleHeartbeat) }

func handleHeartbeat(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.HeartbeatRequest)
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	r.wait = func() {
		err := error(groupcoord.ErrCoordinatorNotAvailable)
		if r.s.groups != nil {
			err = r.s.groups.Heartbeat(groupcoord.HeartbeatRequest{Group: req.Group, MemberID: req.MemberID,
				InstanceID: req.InstanceID, Generation: req.Generation})
		}
		resp.ErrorCode = r.codeOf(err)
	}
	return resp, nil
}
