package protocol

// ListGroups v0–v5: every group this broker coordinates (all of them).
// v4+ filters by state (KIP-518, case-insensitive) and answers each group's
// state; v5+ filters by type (KIP-848) and answers it: every group here is
// "classic", so a types filter without "classic" lists nothing.

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.ListGroups, 0, 5, handleListGroups) }

// classicGroupType is the type of every group of the classic protocol.
const classicGroupType = "classic"

func handleListGroups(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.ListGroupsRequest)
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	r.wait = func() {
		if r.s.groups == nil {
			resp.ErrorCode = r.code(kerr.CoordinatorNotAvailable.Code)
			return
		}
		if !typeListed(req.TypesFilter) {
			return
		}
		for _, l := range r.s.groups.List(req.StatesFilter) {
			lg := kmsg.NewListGroupsResponseGroup()
			lg.Group, lg.ProtocolType, lg.GroupState, lg.GroupType = l.Group, l.ProtocolType, l.State.String(), classicGroupType
			resp.Groups = append(resp.Groups, lg)
		}
	}
	return resp, nil
}

// typeListed says whether a types filter admits classic groups.
func typeListed(types []string) bool {
	if len(types) == 0 {
		return true
	}
	for _, t := range types {
		if strings.EqualFold(t, classicGroupType) {
			return true
		}
	}
	return false
}
