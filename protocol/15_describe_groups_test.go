package protocol

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestDescribeGroups(t *testing.T) {
	t.Parallel()
	b := startGroupBroker(t)
	c := b.dial()
	m := joinAlone(t, c, "g", []byte("assigned"), "t")
	for _, v := range []int16{0, 5, 6} {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.Version, req.Groups, req.IncludeAuthorizedOperations = v, []string{"g", "nope", ""}, true
		resp := roundTrip[*kmsg.DescribeGroupsResponse](c, req)
		g := resp.Groups[0]
		if g.ErrorCode != 0 || g.State != "Stable" || g.ProtocolType != "consumer" || g.Protocol != "range" || len(g.Members) != 1 {
			t.Fatalf("v%d: %+v", v, g)
		}
		gm := g.Members[0]
		if gm.MemberID != m.id || gm.ClientID != "raw-test" || gm.ClientHost != "/127.0.0.1" || string(gm.MemberAssignment) != "assigned" ||
			string(gm.ProtocolMetadata) != string(subscription("t")) {
			t.Fatalf("v%d member: %+v", v, gm)
		}
		if v >= 3 && g.AuthorizedOperations != groupAuthorizedAll {
			t.Errorf("v%d: authorized operations %d", v, g.AuthorizedOperations)
		}
		unknown := resp.Groups[1]
		wantUnknown := int16(0) // Dead, no error, before v6 (KIP-1043)
		if v >= 6 {
			wantUnknown = kerr.GroupIDNotFound.Code
		}
		wantCode(t, "unknown group", unknown.ErrorCode, wantUnknown)
		if unknown.State != "Dead" {
			t.Errorf("v%d: unknown group in state %q", v, unknown.State)
		}
		wantCode(t, "empty group id", resp.Groups[2].ErrorCode, kerr.InvalidGroupID.Code)
	}
}
