//go:build interop

package main

import "github.com/twmb/franz-go/pkg/kmsg"

// The classic group protocol's requests, as the script's members send
// them: member names ("m1") stand for the id each broker gave.

func findCoordinatorReq(group string) *kmsg.FindCoordinatorRequest {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.SetVersion(vFindCoord)
	req.CoordinatorKeys = []string{group}
	return req
}

// rangeMeta is a consumer's subscription to topic (ConsumerMemberMetadata
// v0), the same bytes for both brokers.
func rangeMeta(topic string) []byte {
	m := kmsg.NewConsumerMemberMetadata()
	m.Topics = []string{topic}
	return m.AppendTo(nil)
}

func (s *diffSide) joinReq(group, member, topic string) *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.SetVersion(vJoinGroup)
	req.Group, req.MemberID, req.ProtocolType = group, s.members[member], "consumer"
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 30000, 20000
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name, p.Metadata = "range", rangeMeta(topic)
	req.Protocols = append(req.Protocols, p)
	return req
}

// learnMember remembers the member id a JoinGroup answer gave member.
func (s *diffSide) learnMember(member string, resp kmsg.Response) {
	if id := resp.(*kmsg.JoinGroupResponse).MemberID; id != "" && s.members[member] == "" {
		s.members[member] = id
	}
}

// syncReq sends the leader's assignment (every member gets its name as
// user data) or a follower's empty one.
func (s *diffSide) syncReq(group, member string, generation int32, assign map[string]string) *kmsg.SyncGroupRequest {
	req := kmsg.NewPtrSyncGroupRequest()
	req.SetVersion(vSyncGroup)
	req.Group, req.MemberID, req.Generation = group, s.memberID(member), generation
	req.ProtocolType, req.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
	for m, data := range assign {
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID, a.MemberAssignment = s.members[m], []byte(data)
		req.GroupAssignment = append(req.GroupAssignment, a)
	}
	return req
}

// memberID is member's id, or member itself for a name the broker never
// gave (an unknown member).
func (s *diffSide) memberID(member string) string {
	if id, ok := s.members[member]; ok {
		return id
	}
	return member
}

func (s *diffSide) heartbeatReq(group, member string, generation int32) *kmsg.HeartbeatRequest {
	req := kmsg.NewPtrHeartbeatRequest()
	req.SetVersion(vHeartbeat)
	req.Group, req.MemberID, req.Generation = group, s.memberID(member), generation
	return req
}

func (s *diffSide) leaveReq(group string, members ...string) *kmsg.LeaveGroupRequest {
	req := kmsg.NewPtrLeaveGroupRequest()
	req.SetVersion(vLeaveGroup)
	req.Group = group
	for _, m := range members {
		lm := kmsg.NewLeaveGroupRequestMember()
		lm.MemberID = s.memberID(m)
		req.Members = append(req.Members, lm)
	}
	return req
}

// commitReq commits offset+partition for each partition of topic.
func (s *diffSide) commitReq(group, member string, generation int32, topic string, offset int64, partitions ...int32) *kmsg.OffsetCommitRequest {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.SetVersion(vOffsetCommit)
	req.Group, req.MemberID, req.Generation = group, s.memberID(member), generation
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	for _, p := range partitions {
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.Metadata = p, offset+int64(p), kmsg.StringPtr("meta")
		rp.LeaderEpoch = -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// offsetFetchReq fetches the group's offsets for topic's partitions (all
// the group's offsets when topic is empty).
func offsetFetchReq(group, topic string, partitions ...int32) *kmsg.OffsetFetchRequest {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.SetVersion(vOffsetFetch)
	g := kmsg.NewOffsetFetchRequestGroup()
	g.Group = group
	if topic != "" {
		rt := kmsg.NewOffsetFetchRequestGroupTopic()
		rt.Topic, rt.Partitions = topic, partitions
		g.Topics = append(g.Topics, rt)
	}
	req.Groups = append(req.Groups, g)
	return req
}

func describeGroupReq(group string) *kmsg.DescribeGroupsRequest {
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.SetVersion(5)
	req.Groups = []string{group}
	return req
}

func deleteGroupReq(group string) *kmsg.DeleteGroupsRequest {
	req := kmsg.NewPtrDeleteGroupsRequest()
	req.SetVersion(2)
	req.Groups = []string{group}
	return req
}
