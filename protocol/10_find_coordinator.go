package protocol

// FindCoordinator v0–v6. On one node this broker coordinates every
// consumer group and every transactional id, so a group key (type 0) or a
// transactional id (type 1) is answered with this node; in a cluster
// (Config.Cluster) with the live broker owning the key's coordinator shard
// (groups and transactional ids share the 64 shards), or
// COORDINATOR_NOT_AVAILABLE while none does (a retriable code: the client
// asks again), as it is on a broker without that coordinator. v4+ batches
// keys (KIP-699). Share groups (type 2, v6, KIP-932) are not supported:
// INVALID_REQUEST.
// librdkafka takes this API as its sign of a Kafka >= 0.9 broker: it
// enables its LZ4 codec only when FindCoordinator is advertised.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.FindCoordinator, 0, 6, handleFindCoordinator) }

// Coordinator types of FindCoordinator.
const (
	coordinatorGroup       = 0
	coordinatorTransaction = 1
	coordinatorShare       = 2
)

func handleFindCoordinator(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.FindCoordinatorRequest)
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	if req.Version < 4 {
		c := r.coordinatorFor(req.CoordinatorType, req.CoordinatorKey)
		resp.ErrorCode, resp.NodeID, resp.Host, resp.Port = c.ErrorCode, c.NodeID, c.Host, c.Port
		resp.ErrorMessage = c.ErrorMessage
		return resp, nil
	}
	for _, key := range req.CoordinatorKeys {
		resp.Coordinators = append(resp.Coordinators, r.coordinatorFor(req.CoordinatorType, key))
	}
	return resp, nil
}

// coordinatorFor answers one key.
func (r *request) coordinatorFor(typ int8, key string) kmsg.FindCoordinatorResponseCoordinator {
	c := kmsg.NewFindCoordinatorResponseCoordinator()
	c.Key, c.NodeID, c.Port = key, -1, -1
	fail := func(code int16, msg string) kmsg.FindCoordinatorResponseCoordinator {
		c.ErrorCode, c.ErrorMessage = r.code(code), &msg
		return c
	}
	switch typ {
	case coordinatorGroup, coordinatorTransaction:
		if r.s.cfg.Cluster != nil {
			return r.clusterCoordinator(c, typ, key)
		}
		if typ == coordinatorGroup && r.s.groups == nil {
			return fail(kerr.CoordinatorNotAvailable.Code, "the group coordinator is not running")
		}
		if typ == coordinatorTransaction && r.s.cfg.Txns == nil {
			return fail(kerr.CoordinatorNotAvailable.Code, "the transaction coordinator is not running")
		}
		c.NodeID, c.Host, c.Port = r.s.cfg.NodeID, r.s.cfg.AdvertiseHost, r.s.cfg.AdvertisePort
		return c
	case coordinatorShare:
		return fail(kerr.InvalidRequest.Code, "share groups are not supported")
	}
	return fail(kerr.InvalidRequest.Code, fmt.Sprintf("unknown coordinator type %d", typ))
}

// clusterCoordinator answers a key with the live broker the cluster names
// as its coordinator.
func (r *request) clusterCoordinator(c kmsg.FindCoordinatorResponseCoordinator, typ int8, key string) kmsg.FindCoordinatorResponseCoordinator {
	node, ok := r.s.cfg.Cluster.Coordinator(typ, key)
	var b Broker
	if ok {
		b, ok = r.s.cluster().broker(node)
	}
	if !ok {
		msg := "no live broker coordinates this key yet"
		c.ErrorCode, c.ErrorMessage = r.code(kerr.CoordinatorNotAvailable.Code), &msg
		return c
	}
	c.NodeID, c.Host, c.Port = b.NodeID, b.Host, b.Port
	return c
}
