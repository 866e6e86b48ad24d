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
	d.waitGroupCoordinator(group, topic)
	d.same("ConsumerGroupHeartbeat join", func() kmsg.Request {
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.SetVersion(1) // the client names itself (KIP-1082)
		req.Group, req.MemberID, req.MemberEpoch = group, "kafkadiff-member-0000000001", 0
		req.RebalanceTimeoutMillis, req.SubscribedTopicNames = 30000, []string{topic}
		req.ServerAssignor = kmsg.StringPtr("uniform")
		return req
	})
}
