package protocol

// DescribeGroups v0–v6: state, protocol type, members with their client id
// and host; a stable group also shows the protocol and each member's
// metadata and assignment (as Kafka, which omits them while rebalancing).
// An unknown group is described as Dead with no error before v6 and with
// GROUP_ID_NOT_FOUND from v6 (KIP-1043). An empty group id is
// INVALID_GROUP_ID. v3+ reports authorized operations when asked (every
// group operation: there are no ACLs); v4+ shows group.instance.id.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/groupcoord"
)

func init() { register(kmsg.DescribeGroups, 0, 6, handleDescribeGroups) }

// groupAuthorizedAll is the bitfield of every ACL operation Kafka reports
// for a group when nothing is denied: READ, DELETE, DESCRIBE.
const groupAuthorizedAll = int32(1<<3 | 1<<6 | 1<<8)

func handleDescribeGroups(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.DescribeGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	r.wait = func() {
		for _, id := range req.Groups {
			resp.Groups = append(resp.Groups, r.describeGroup(req, id))
		}
	}
	return resp, nil
}

func (r *request) describeGroup(req *kmsg.DescribeGroupsRequest, id string) kmsg.DescribeGroupsResponseGroup {
	dg := kmsg.NewDescribeGroupsResponseGroup()
	dg.Group, dg.AuthorizedOperations = id, authorizedOmitted
	if r.s.groups == nil {
		dg.ErrorCode = r.code(kerr.CoordinatorNotAvailable.Code)
		return dg
	}
	d := r.s.groups.Describe(id)
	dg.State, dg.ProtocolType, dg.Protocol = d.State.String(), d.ProtocolType, d.Protocol
	if d.Err != nil && (d.Err != groupcoord.ErrGroupNotFound || req.Version >= 6) {
		dg.ErrorCode = r.codeOf(d.Err)
		if d.Err == groupcoord.ErrGroupNotFound {
			dg.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("Group %s not found.", id))
		}
		return dg
	}
	if req.IncludeAuthorizedOperations && d.Err == nil {
		dg.AuthorizedOperations = groupAuthorizedAll
	}
	for _, m := range d.Members {
		dm := kmsg.NewDescribeGroupsResponseGroupMember()
		dm.MemberID, dm.InstanceID, dm.ClientID, dm.ClientHost = m.MemberID, m.InstanceID, m.ClientID, m.ClientHost
		dm.ProtocolMetadata, dm.MemberAssignment = m.Metadata, m.Assignment
		dg.Members = append(dg.Members, dm)
	}
	return dg
}
