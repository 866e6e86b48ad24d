package protocol

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestFindCoordinator(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := b.dial()
	for _, v := range []int16{0, 1, 3} {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorKey = v, "g"
		resp := roundTrip[*kmsg.FindCoordinatorResponse](c, req)
		wantCode(t, "group", resp.ErrorCode, 0)
		if resp.NodeID != 0 || resp.Host != "127.0.0.1" || resp.Port != b.srv.cfg.AdvertisePort {
			t.Fatalf("v%d: coordinator %d at %s:%d", v, resp.NodeID, resp.Host, resp.Port)
		}
	}
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version, req.CoordinatorType, req.CoordinatorKey = 3, 1, "txn"
	if resp := roundTrip[*kmsg.FindCoordinatorResponse](c, req); resp.ErrorCode != 0 || resp.NodeID != 0 || resp.Port != b.srv.cfg.AdvertisePort {
		t.Fatalf("transactional id (v3): error %s, coordinator %d at port %d", errName(resp.ErrorCode), resp.NodeID, resp.Port)
	}
	for _, tc := range []struct {
		typ  int8
		want int16
	}{{0, 0}, {1, 0}, {2, kerr.InvalidRequest.Code}, {7, kerr.InvalidRequest.Code}} {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorType, req.CoordinatorKeys = 6, tc.typ, []string{"k1", "k2"}
		resp := roundTrip[*kmsg.FindCoordinatorResponse](c, req)
		if len(resp.Coordinators) != 2 || resp.Coordinators[1].Key != "k2" {
			t.Fatalf("type %d: %+v", tc.typ, resp.Coordinators)
		}
		for _, co := range resp.Coordinators {
			wantCode(t, "batched key", co.ErrorCode, tc.want)
			if (tc.want == 0) != (co.NodeID == 0 && co.Port == b.srv.cfg.AdvertisePort) {
				t.Fatalf("type %d: coordinator %+v", tc.typ, co)
			}
		}
	}
}
