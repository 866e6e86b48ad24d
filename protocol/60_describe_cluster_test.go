package protocol

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestDescribeCluster(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := b.dial()
	cases := []struct {
		version      int16
		endpointType int8
		authorized   bool
		code         int16
	}{
		{0, 0, false, 0},
		{0, 0, true, 0},
		{1, 1, false, 0},
		{1, 2, false, kerr.UnsupportedEndpointType.Code},
		{2, 1, true, 0},
		{2, 2, false, kerr.UnsupportedEndpointType.Code},
	}
	for _, tc := range cases {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.Version, req.EndpointType, req.IncludeClusterAuthorizedOperations = tc.version, tc.endpointType, tc.authorized
		resp := roundTrip[*kmsg.DescribeClusterResponse](c, req)
		wantCode(t, "DescribeCluster", resp.ErrorCode, tc.code)
		if tc.code != 0 {
			continue
		}
		if resp.ClusterID != "test-cluster" || resp.ControllerID != 0 || len(resp.Brokers) != 1 {
			t.Fatalf("v%d: cluster %q controller %d brokers %+v", tc.version, resp.ClusterID, resp.ControllerID, resp.Brokers)
		}
		if br := resp.Brokers[0]; br.NodeID != 0 || br.Host != "127.0.0.1" || br.Port != b.srv.cfg.AdvertisePort {
			t.Errorf("v%d: broker %+v", tc.version, br)
		}
		if ops := resp.ClusterAuthorizedOperations; tc.authorized == (ops == authorizedOmitted) {
			t.Errorf("v%d: authorized operations %d with include=%v", tc.version, ops, tc.authorized)
		}
	}
}
