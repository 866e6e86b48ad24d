package protocol

import (
	"sort"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestListGroups(t *testing.T) {
	t.Parallel()
	b := startGroupBroker(t)
	b.createTopic("t", 1, nil)
	c := b.dial()
	joinAlone(t, c, "stable", nil, "t")
	roundTrip[*kmsg.OffsetCommitResponse](c, commitReq(8, "empty", "", -1, "t", 1, 0))
	list := func(v int16, states, types []string) string {
		req := kmsg.NewPtrListGroupsRequest()
		req.Version, req.StatesFilter, req.TypesFilter = v, states, types
		resp := roundTrip[*kmsg.ListGroupsResponse](c, req)
		wantCode(t, "list groups", resp.ErrorCode, 0)
		var out []string
		for _, g := range resp.Groups {
			s := g.Group + "/" + g.ProtocolType
			if v >= 4 {
				s += "/" + g.GroupState
			}
			if v >= 5 {
				s += "/" + g.GroupType
			}
			out = append(out, s)
		}
		sort.Strings(out)
		return strings.Join(out, " ")
	}
	cases := []struct {
		v             int16
		states, types []string
		want          string
	}{
		{0, nil, nil, "empty/ stable/consumer"},
		{4, nil, nil, "empty//Empty stable/consumer/Stable"},
		{4, []string{"stable"}, nil, "stable/consumer/Stable"},
		{4, []string{"Dead", "PreparingRebalance"}, nil, ""},
		{5, []string{"Empty"}, []string{"Classic"}, "empty//Empty/classic"},
		{5, nil, []string{"consumer"}, ""},
	}
	for _, tc := range cases {
		if got := list(tc.v, tc.states, tc.types); got != tc.want {
			t.Errorf("v%d states %v types %v: %q, want %q", tc.v, tc.states, tc.types, got, tc.want)
		}
	}
}
