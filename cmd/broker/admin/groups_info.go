package admin

import (
	"errors"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// errNoSuchGroup is the failure of describing a group the cluster does not
// know.
var errNoSuchGroup = errors.New("no such group")

// groupInfo is what `groups describe` knows of one group, of the classic
// protocol or of KIP-848's consumer protocol.
type groupInfo struct {
	name         string
	groupType    string // "classic", "consumer" (KIP-848), or "" from brokers before ListGroups v5
	state        string
	protocolType string
	strategy     string // the assignor
	generation   *int32 // the KIP-848 group epoch; classic DescribeGroups carries no generation
	coordinator  kadm.BrokerDetail
	members      []groupMember // by client id, instance id, member id
	lag          []kadm.GroupMemberLag
}

// describeGroups describes groups with their lag: DescribeGroups and
// OffsetFetch through kadm.Lag, and ConsumerGroupDescribe for the groups
// listed (ListGroups) as KIP-848 consumer groups. Groups that could not be
// described are left out and returned as failures (errNoSuchGroup for an
// unknown one).
func (inv *invocation) describeGroups(names []string, listed kadm.ListedGroups) ([]groupInfo, []error, error) {
	if len(names) == 0 {
		return nil, nil, nil // kadm would describe every group
	}
	lags, err := inv.adm.Lag(inv.ctx, names...)
	if err != nil {
		return nil, nil, inv.failed("describe groups", err)
	}
	next, err := inv.describeConsumerGroups(listed, names)
	if err != nil {
		return nil, nil, err
	}
	var out []groupInfo
	var failed []error
	for _, l := range lags.Sorted() {
		info, err := classicInfo(l)
		if cg, ok := next[l.Group]; ok {
			info, err = consumerInfo(l, cg)
		}
		if err != nil {
			failed = append(failed, err)
			continue
		}
		info.groupType = listed[l.Group].GroupType
		out = append(out, info)
	}
	return out, failed, nil
}

// classicInfo is a classic group as DescribeGroups describes it.
func classicInfo(l kadm.DescribedGroupLag) (groupInfo, error) {
	switch {
	case errors.Is(l.DescribeErr, kerr.GroupIDNotFound) || l.DescribeErr == nil && l.State == "Dead":
		return groupInfo{}, fmt.Errorf("group %s: %w", l.Group, errNoSuchGroup)
	case l.DescribeErr != nil:
		return groupInfo{}, groupError(l.Group, l.DescribeErr, "")
	case l.FetchErr != nil:
		return groupInfo{}, fmt.Errorf("group %s: fetch offsets: %w", l.Group, l.FetchErr)
	}
	info := groupInfo{name: l.Group, state: l.State, protocolType: l.ProtocolType, strategy: l.Protocol, coordinator: l.Coordinator, lag: l.Lag.Sorted()}
	for _, m := range l.Members {
		gm := groupMember{MemberID: m.MemberID, InstanceID: m.InstanceID, Host: m.ClientHost, ClientID: m.ClientID}
		set := kadm.TopicsSet{}
		if a, ok := m.Assigned.AsConsumer(); ok {
			for _, at := range a.Topics {
				set.Add(at.Topic, at.Partitions...)
			}
		}
		gm.Assignment = assignment(set)
		info.members = append(info.members, gm)
	}
	sortMembers(info.members)
	return info, nil
}

// consumerInfo is a KIP-848 group as ConsumerGroupDescribe describes it,
// with the coordinator, committed offsets and lag kadm.Lag found.
func consumerInfo(l kadm.DescribedGroupLag, cg consumerGroup) (groupInfo, error) {
	switch {
	case errors.Is(cg.err, kerr.GroupIDNotFound):
		return groupInfo{}, fmt.Errorf("group %s: %w", l.Group, errNoSuchGroup)
	case cg.err != nil:
		return groupInfo{}, groupError(l.Group, cg.err, "")
	case l.FetchErr != nil:
		return groupInfo{}, fmt.Errorf("group %s: fetch offsets: %w", l.Group, l.FetchErr)
	}
	epoch := cg.epoch
	info := groupInfo{name: l.Group, state: cg.state, protocolType: "consumer", strategy: cg.assignor,
		generation: &epoch, coordinator: l.Coordinator, members: cg.members, lag: l.Lag.Sorted()}
	sortMembers(info.members)
	return info, nil
}

// assignment lists a set by topic, partitions sorted.
func assignment(set kadm.TopicsSet) []topicPartitions {
	out := []topicPartitions{}
	for _, tp := range set.Sorted() {
		out = append(out, topicPartitions{tp.Topic, tp.Partitions})
	}
	return out
}

// sortMembers orders members by client id, instance id, then member id:
// the names an operator chose come first.
func sortMembers(ms []groupMember) {
	key := func(m groupMember) string { return m.ClientID + "\x00" + deref(m.InstanceID) + "\x00" + m.MemberID }
	sort.Slice(ms, func(i, j int) bool { return key(ms[i]) < key(ms[j]) })
}

// owners maps each assigned partition to its member.
func (g *groupInfo) owners() map[topicPartition]*groupMember {
	out := map[topicPartition]*groupMember{}
	for i := range g.members {
		m := &g.members[i]
		for _, a := range m.Assignment {
			for _, p := range a.Partitions {
				out[topicPartition{a.Topic, p}] = m
			}
		}
	}
	return out
}
