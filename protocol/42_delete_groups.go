package protocol

// DeleteGroups v0–v3: deletes empty groups with their committed offsets,
// durably, before answering (the wait runs on the writer, request.wait).
// A group with members is NON_EMPTY_GROUP, an unknown one
// GROUP_ID_NOT_FOUND, an empty id INVALID_GROUP_ID. v3 adds an error
// message per group (KIP-1331).

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/groupcoord"
)

func init() { register(kmsg.DeleteGroups, 0, 3, handleDeleteGroups) }

func handleDeleteGroups(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.DeleteGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	r.wait = func() {
		errs := make([]error, len(req.Groups))
		for i := range errs {
			errs[i] = groupcoord.ErrCoordinatorNotAvailable
		}
		if r.s.groups != nil {
			errs, _ = awaitGroup(r, r.s.groups.DeleteGroups(req.Groups), errs)
		}
		for i, id := range req.Groups {
			dg := kmsg.NewDeleteGroupsResponseGroup()
			dg.Group, dg.ErrorCode = id, r.codeOf(errs[i])
			if errs[i] != nil {
				dg.ErrorMessage = errorMessage(errs[i])
			}
			resp.Groups = append(resp.Groups, dg)
		}
	}
	return resp, nil
}
