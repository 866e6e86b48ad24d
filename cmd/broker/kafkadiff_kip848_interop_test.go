//go:build interop

package main

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestInteropDiffConsumerGroupProtocol: a consumer of the KIP-848 group
// protocol (group.protocol=consumer) joins with its first
// ConsumerGroupHeartbeat. Until issue 21 lands Sediment answers
// UNSUPPORTED_VERSION, which makes the Java client fail rather than fall
// back; Kafka serves it.
func TestInteropDiffConsumerGroupProtocol(t *testing.T) {
	d := newDiffRun(t)
	topic, group := diffTopic(t, "t"), diffTopic(t, "g")
	d.same("CreateTopics", func() kmsg.Request { return createTopicReq(topic, 2, 1) })
	d.waitTopics(topic)
	d.settle("group coordinator", func(*diffSide) kmsg.Request { return findCoordinatorReq(group) }, func(r kmsg.Response) bool {
		c := r.(*kmsg.FindCoordinatorResponse).Coordinators
		return len(c) == 1 && c[0].ErrorCode == 0
	})
	d.settle("group offsets", func(*diffSide) kmsg.Request { return offsetFetchReq(group, topic, 0) }, func(r kmsg.Response) bool {
		g := r.(*kmsg.OffsetFetchResponse).Groups
		return len(g) == 1 && g[0].ErrorCode == 0
	})
	d.same("ConsumerGroupHeartbeat join", func() kmsg.Request {
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.SetVersion(1) // the client names itself (KIP-1082)
		req.Group, req.MemberID, req.MemberEpoch = group, "kafkadiff-member-0000000001", 0
		req.RebalanceTimeoutMillis, req.SubscribedTopicNames = 30000, []string{topic}
		req.ServerAssignor = kmsg.StringPtr("uniform")
		return req
	})
}
