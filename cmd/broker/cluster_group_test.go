package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestClusterGroupFailover (issue 18, tests 6 and 9): two static members
// of a group consume a topic and commit. The broker that coordinates the
// group is killed with SIGKILL. FindCoordinator then names another broker,
// which holds the group's committed offsets unchanged; the members go on
// consuming and committing through it, and each static member keeps the
// partitions it had.
func TestClusterGroupFailover(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	const topic, partitions, group = "coord", 4, "coord-group"
	createTopics(t, c.addrs(1)[0], topic, partitions)
	c.waitOwned(topic, partitions, nil)
	produceNumbered(t, c.addrs(1)[0], topic, 400, partitions)
	adm := kadm.NewClient(newClusterClient(t, c.addrs()))
	defer adm.Close()

	members := make([]*groupMember, 2)
	for i := range members {
		name := fmt.Sprintf("static-%d", i)
		members[i] = startMember(t, c.addrs(1)[0], group, topic, name, kgo.SeedBrokers(c.addrs()...),
			kgo.InstanceID(name), kgo.AutoCommitInterval(300*time.Millisecond), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	}
	c.waitCommitted(adm, group, topic, 400)
	before := c.committed(adm, group, topic)
	assigned := c.staticAssignment(adm, group)

	coord := c.coordinator(adm, group)
	c.kill(coord)
	c.waitFor(30*time.Second, "another broker coordinates the group", func(ctx context.Context) (bool, string) {
		resp := adm.FindGroupCoordinators(ctx, group)
		r, ok := resp[group]
		if !ok || r.Err != nil || r.NodeID == coord {
			return false, fmt.Sprintf("%+v", resp)
		}
		return true, ""
	})
	// A fresh admin client: franz-go keeps dialing a group's cached
	// coordinator while it refuses connections.
	live := without(c.ids(), coord)
	adm = kadm.NewClient(newClusterClient(t, c.addrs(live...)))
	defer adm.Close()
	if after := c.committed(adm, group, topic); !maps.Equal(after, before) {
		t.Fatalf("committed offsets %v after the coordinator's loss, were %v", after, before)
	}

	produceNumbered(t, c.addrs(live...)[0], topic, 200, partitions)
	c.waitCommitted(adm, group, topic, 600)
	if now := c.staticAssignment(adm, group); !maps.EqualFunc(now, assigned, slices.Equal[[]int32]) {
		t.Errorf("static members' partitions %v after the failover, were %v", now, assigned)
	}
	c.checkHistory(nil)
}

// coordinator returns the node FindCoordinator names for group.
func (c *testCluster) coordinator(adm *kadm.Client, group string) int32 {
	c.t.Helper()
	var node int32
	c.waitFor(30*time.Second, "a coordinator for "+group, func(ctx context.Context) (bool, string) {
		r, ok := adm.FindGroupCoordinators(ctx, group)[group]
		if !ok || r.Err != nil {
			return false, fmt.Sprintf("%+v", r)
		}
		node = r.NodeID
		return true, ""
	})
	return node
}

// committed returns group's committed offsets of topic by partition,
// retrying while its coordinator moves.
func (c *testCluster) committed(adm *kadm.Client, group, topic string) map[int32]int64 {
	c.t.Helper()
	var out map[int32]int64
	c.waitFor(30*time.Second, "the committed offsets of "+group, func(ctx context.Context) (bool, string) {
		offsets, err := adm.FetchOffsets(ctx, group)
		if err == nil {
			err = offsets.Error()
		}
		if err != nil {
			return false, err.Error()
		}
		out = map[int32]int64{}
		offsets.Each(func(o kadm.OffsetResponse) {
			if o.Topic == topic {
				out[o.Partition] = o.At
			}
		})
		return true, ""
	})
	return out
}

// waitCommitted waits until group's committed offsets of topic add up to
// total (every record consumed and committed).
func (c *testCluster) waitCommitted(adm *kadm.Client, group, topic string, total int64) {
	c.t.Helper()
	c.waitFor(45*time.Second, fmt.Sprintf("%s committed %d records", group, total), func(ctx context.Context) (bool, string) {
		offsets, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			return false, err.Error()
		}
		var sum int64
		offsets.Each(func(o kadm.OffsetResponse) {
			if o.Topic == topic && o.Err == nil {
				sum += o.At
			}
		})
		return sum == total, fmt.Sprintf("committed %d", sum)
	})
}

// staticAssignment returns the partitions each static member of group is
// assigned, by instance id, once every member has some.
func (c *testCluster) staticAssignment(adm *kadm.Client, group string) map[string][]int32 {
	c.t.Helper()
	var out map[string][]int32
	c.waitFor(30*time.Second, "the assignment of "+group, func(ctx context.Context) (bool, string) {
		described, err := adm.DescribeGroups(ctx, group)
		if err != nil {
			return false, err.Error()
		}
		g, ok := described[group]
		if !ok || g.Err != nil || g.State != "Stable" {
			return false, fmt.Sprintf("%+v", g)
		}
		out = map[string][]int32{}
		for _, m := range g.Members {
			a, ok := m.Assigned.AsConsumer()
			if m.InstanceID == nil || !ok || len(a.Topics) == 0 {
				return false, fmt.Sprintf("member %s: no consumer assignment", m.MemberID)
			}
			for _, tp := range a.Topics {
				out[*m.InstanceID] = append(out[*m.InstanceID], tp.Partitions...)
			}
			slices.Sort(out[*m.InstanceID])
		}
		return true, ""
	})
	return out
}
