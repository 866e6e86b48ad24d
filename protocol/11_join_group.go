package protocol

// JoinGroup v0–v9, the classic group protocol, agnostic to assignors
// (eager and cooperative clients alike). The join waits, on the writer
// (request.wait) and never on the connection's reader, until the rebalance
// completes. v0 has no rebalance timeout: the session timeout serves as one.
// v4+ makes a new dynamic member rejoin with the member id it is given
// (MEMBER_ID_REQUIRED, KIP-394); v5+ carries group.instance.id (static
// membership, KIP-345); v7+ answers the protocol type and a nullable
// protocol; v8+ carries the client's reason, which is logged; v9+ tells a
// restarted static leader to skip the assignment (KIP-814).

import (
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/groupcoord"
)

func init() { register(kmsg.JoinGroup, 0, 9, handleJoinGroup) }

func handleJoinGroup(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.JoinGroupRequest)
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	r.wait = func() { r.joinGroup(req, resp) }
	return resp, nil
}

func (r *request) joinGroup(req *kmsg.JoinGroupRequest, resp *kmsg.JoinGroupResponse) {
	jr := groupcoord.JoinRequest{
		Group: req.Group, MemberID: req.MemberID, InstanceID: req.InstanceID,
		ClientID: r.clientID, ClientHost: r.clientHost(),
		SessionTimeout:       time.Duration(req.SessionTimeoutMillis) * time.Millisecond,
		RebalanceTimeout:     time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond,
		ProtocolType:         req.ProtocolType,
		RequireKnownMemberID: req.Version >= 4, SupportsSkipAssignment: req.Version >= 9,
	}
	if req.Version == 0 {
		jr.RebalanceTimeout = jr.SessionTimeout
	}
	if req.Reason != nil {
		jr.Reason = *req.Reason
	}
	for _, p := range req.Protocols {
		jr.Protocols = append(jr.Protocols, groupcoord.Protocol{Name: p.Name, Metadata: p.Metadata})
	}
	res := groupcoord.JoinResult{Err: groupcoord.ErrCoordinatorNotAvailable, MemberID: req.MemberID, Generation: -1}
	if r.s.groups != nil {
		res, _ = awaitGroup(r, r.s.groups.Join(jr), res)
	}
	resp.ErrorCode, resp.Generation, resp.MemberID = r.codeOf(res.Err), res.Generation, res.MemberID
	if res.Err != nil {
		return
	}
	resp.ProtocolType, resp.Protocol = &res.ProtocolType, &res.Protocol
	resp.LeaderID, resp.SkipAssignment = res.LeaderID, res.SkipAssignment
	for _, m := range res.Members {
		rm := kmsg.NewJoinGroupResponseMember()
		rm.MemberID, rm.InstanceID, rm.ProtocolMetadata = m.MemberID, m.InstanceID, m.Metadata
		resp.Members = append(resp.Members, rm)
	}
}

// clientHost is the client's address as Kafka reports it in
// DescribeGroups: "/" and the IP.
func (r *request) clientHost() string {
	host, _, err := net.SplitHostPort(r.c.remote)
	if err != nil {
		host = r.c.remote
	}
	return "/" + host
}

// awaitGroup waits for a coordinator result. If the connection ends first
// (the answer would go nowhere), it returns gone; ok is false then.
func awaitGroup[T any](r *request, ch <-chan T, gone T) (res T, ok bool) {
	select {
	case res = <-ch:
		return res, true
	case <-r.ctx().Done():
		return gone, false
	}
}
