//go:build interop

package main

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestInteropDiffGroup: the classic group protocol through two members'
// lives: MEMBER_ID_REQUIRED, join, sync, heartbeat and commit with their
// errors (unknown member, illegal generation, rebalance in progress), a
// second member's join that rebalances the group, leaving, offsets fetched
// and the group deleted.
func TestInteropDiffGroup(t *testing.T) {
	d := newDiffRun(t)
	topic, group := diffTopic(t, "t"), diffTopic(t, "g")
	d.same("CreateTopics", func() kmsg.Request { return createTopicReq(topic, 2, 1) })
	d.waitTopics(topic)
	d.waitGroupCoordinator(group, topic)
	d.same("FindCoordinator", func() kmsg.Request { return findCoordinatorReq(group) })
	d.same("OffsetFetch unknown group", func() kmsg.Request { return offsetFetchReq(group, topic, 0, 1) })
	d.same("DescribeGroups unknown group", func() kmsg.Request { return describeGroupReq(group) })

	join := func(step, member string) { d.join(step, group, member, topic) }
	join("JoinGroup m1 without id", "m1")
	join("JoinGroup m1", "m1")
	d.same("JoinGroup unknown member", func() kmsg.Request {
		req := d.sides[0].joinReq(group, "m1", topic)
		req.MemberID = "nobody"
		return req
	})
	sync := func(step, member string, gen int32, assign map[string]string) {
		d.exchange(step, func(s *diffSide) kmsg.Request { return s.syncReq(group, member, gen, assign) })
	}
	sync("SyncGroup unknown member", "nobody", 1, nil)
	sync("SyncGroup illegal generation", "m1", 5, nil)
	sync("SyncGroup m1", "m1", 1, map[string]string{"m1": "all"})
	beat := func(step, member string, gen int32) {
		d.exchange(step, func(s *diffSide) kmsg.Request { return s.heartbeatReq(group, member, gen) })
	}
	beat("Heartbeat", "m1", 1)
	beat("Heartbeat unknown member", "nobody", 1)
	beat("Heartbeat illegal generation", "m1", 7)
	commit := func(step, member string, gen int32, offset int64, partitions ...int32) {
		d.exchange(step, func(s *diffSide) kmsg.Request { return s.commitReq(group, member, gen, topic, offset, partitions...) })
	}
	commit("OffsetCommit", "m1", 1, 10, 0, 1)
	commit("OffsetCommit illegal generation", "m1", 4, 20, 0)
	commit("OffsetCommit unknown member", "nobody", 1, 20, 0)
	commit("OffsetCommit unknown partition", "m1", 1, 20, 9)
	commit("OffsetCommit simple on an active group", "", -1, 20, 0)
	d.same("OffsetFetch", func() kmsg.Request { return offsetFetchReq(group, topic, 0, 1, 9) })
	d.same("OffsetFetch all", func() kmsg.Request { return offsetFetchReq(group, "") })
	d.same("DescribeGroups stable", func() kmsg.Request { return describeGroupReq(group) })

	// A second member joins: the group rebalances until m1 rejoins.
	join("JoinGroup m2 without id", "m2")
	m2Joined := d.start("JoinGroup m2", func(s *diffSide) kmsg.Request { return s.joinReq(group, "m2", topic) })
	// Wait until each coordinator has m2's join (it came on another
	// connection): m1's heartbeat then says the group rebalances.
	d.settle("rebalance", func(s *diffSide) kmsg.Request { return s.heartbeatReq(group, "m1", 1) }, func(r kmsg.Response) bool {
		return r.(*kmsg.HeartbeatResponse).ErrorCode == kerr.RebalanceInProgress.Code
	})
	beat("Heartbeat during rebalance", "m1", 1)
	commit("OffsetCommit during rebalance", "m1", 1, 30, 0)
	sync("SyncGroup during rebalance", "m1", 1, nil)
	join("JoinGroup m1 rejoins", "m1")
	m2Joined()
	m2Synced := d.start("SyncGroup m2", func(s *diffSide) kmsg.Request { return s.syncReq(group, "m2", 2, nil) })
	sync("SyncGroup m1 leader", "m1", 2, map[string]string{"m1": "p0", "m2": "p1"})
	m2Synced()
	beat("Heartbeat old generation", "m1", 1)
	beat("Heartbeat m2", "m2", 2)
	d.same("DescribeGroups two members", func() kmsg.Request { return describeGroupReq(group) })
	d.same("DeleteGroups non-empty", func() kmsg.Request { return deleteGroupReq(group) })

	d.exchange("LeaveGroup m2", func(s *diffSide) kmsg.Request { return s.leaveReq(group, "m2") })
	d.exchange("LeaveGroup unknown member", func(s *diffSide) kmsg.Request { return s.leaveReq(group, "nobody") })
	beat("Heartbeat after a leave", "m1", 2)
	d.exchange("LeaveGroup m1", func(s *diffSide) kmsg.Request { return s.leaveReq(group, "m1") })
	d.same("DescribeGroups empty", func() kmsg.Request { return describeGroupReq(group) })
	commit("OffsetCommit simple on an empty group", "", -1, 40, 1)
	d.same("OffsetFetch after leaving", func() kmsg.Request { return offsetFetchReq(group, topic, 0, 1) })
	d.same("DeleteGroups", func() kmsg.Request { return deleteGroupReq(group) })
	d.same("OffsetFetch after delete", func() kmsg.Request { return offsetFetchReq(group, topic, 0, 1) })
}

// waitGroupCoordinator waits until both brokers serve group: Kafka creates
// __consumer_offsets on the first FindCoordinator and then loads the
// group's partition.
func (d *diffRun) waitGroupCoordinator(group, topic string) {
	d.t.Helper()
	d.settle("group coordinator", func(*diffSide) kmsg.Request { return findCoordinatorReq(group) }, func(r kmsg.Response) bool {
		c := r.(*kmsg.FindCoordinatorResponse).Coordinators
		return len(c) == 1 && c[0].ErrorCode == 0
	})
	d.settle("group offsets", func(*diffSide) kmsg.Request { return offsetFetchReq(group, topic, 0) }, func(r kmsg.Response) bool {
		g := r.(*kmsg.OffsetFetchResponse).Groups
		return len(g) == 1 && g[0].ErrorCode == 0
	})
}
