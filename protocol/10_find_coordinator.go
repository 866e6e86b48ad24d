package protocol

// FindCoordinator v0–v6. On one node this broker coordinates every
// consumer group, so a group key (type 0) is answered with this node; in a
// cluster (Config.Cluster) with the live broker owning the group's
// coordinator shard, or COORDINATOR_NOT_AVAILABLE while none does (a
// retriable code: the client asks again). v4+ batches keys
// (KIP-699). Transactions are not supported: a transactional id (type 1)
// gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED, the code InitProducerId
// gives it, which clients treat as fatal instead of retrying forever.
// Share groups (type 2, v6, KIP-932) are not supported: INVALID_REQUEST.
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
	case coordinatorGroup:
		if r.s.cfg.Cluster != nil {
			return r.clusterCoordinator(c, typ, key)
		}
		if r.s.groups == nil {
			return fail(kerr.CoordinatorNotAvailable.Code, "the group coordinator is not running")
		}
		c.NodeID, c.Host, c.Port = r.s.cfg.NodeID, r.s.cfg.AdvertiseHost, r.s.cfg.AdvertisePort
		return c
	case coordinatorTransaction:
		return fail(kerr.TransactionalIDAuthorizationFailed.Code, "transactions are not supported")
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
