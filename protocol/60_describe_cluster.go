package protocol

// DescribeCluster v0–v2: the live brokers (with their racks) and the
// controller; on one node this broker is both. v1+ asks for an endpoint type: brokers (1) are answered, controllers (2)
// get UNSUPPORTED_ENDPOINT_TYPE since there is no separate controller
// quorum to reach.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.DescribeCluster, 0, 2, handleDescribeCluster) }

func handleDescribeCluster(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.DescribeClusterRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.EndpointType = req.EndpointType
	if req.Version >= 1 && req.EndpointType != 1 {
		resp.ErrorCode = r.code(kerr.UnsupportedEndpointType.Code)
		return resp, nil
	}
	c := r.s.cluster()
	resp.ClusterID, resp.ControllerID = r.s.cfg.ClusterID, c.controller
	for _, cb := range c.brokers {
		b := kmsg.NewDescribeClusterResponseBroker()
		b.NodeID, b.Host, b.Port, b.Rack = cb.NodeID, cb.Host, cb.Port, rackPtr(cb.Rack)
		resp.Brokers = append(resp.Brokers, b)
	}
	resp.ClusterAuthorizedOperations = authorizedOmitted
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = clusterAuthorizedAll
	}
	return resp, nil
}

// clusterAuthorizedAll is every cluster ACL operation: CREATE, CLUSTER_ACTION,
// DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, ALTER, DESCRIBE.
const clusterAuthorizedAll = int32(1<<5 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12)
