package protocol

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestDeleteGroups(t *testing.T) {
	t.Parallel()
	b := startGroupBroker(t)
	b.createTopic("t", 1, nil)
	c := b.dial()
	joinAlone(t, c, "busy", nil, "t")
	roundTrip[*kmsg.OffsetCommitResponse](c, commitReq(8, "idle", "", -1, "t", 1, 0))
	req := kmsg.NewPtrDeleteGroupsRequest()
	req.Version, req.Groups = 3, []string{"busy", "idle", "nope", ""}
	resp := roundTrip[*kmsg.DeleteGroupsResponse](c, req)
	want := []int16{kerr.NonEmptyGroup.Code, 0, kerr.GroupIDNotFound.Code, kerr.InvalidGroupID.Code}
	for i, g := range resp.Groups {
		wantCode(t, "delete "+g.Group, g.ErrorCode, want[i])
		if (g.ErrorCode != 0) != (g.ErrorMessage != nil) {
			t.Errorf("group %q: error %d with message %v", g.Group, g.ErrorCode, g.ErrorMessage)
		}
	}
	if offs := fetchOffsets(t, c, "idle", "t", 0); offs != "-1/" {
		t.Fatalf("offsets of the deleted group: %s", offs)
	}
	resp = roundTrip[*kmsg.DeleteGroupsResponse](c, req)
	wantCode(t, "delete again", resp.Groups[1].ErrorCode, kerr.GroupIDNotFound.Code)
}
