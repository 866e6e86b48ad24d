package admin

import (
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumerGroup is a KIP-848 consumer group as ConsumerGroupDescribe
// answers it.
type consumerGroup struct {
	state, assignor string
	epoch           int32
	members         []groupMember
	err             error
}

// describeConsumerGroups describes the groups among names that ListGroups
// types as KIP-848 consumer groups. The request goes out directly rather
// than through kadm.DescribeConsumerGroups, which keys assignments by the
// topic name in the answer: a broker may send only topic ids (kfake does),
// and those are resolved here through Metadata.
func (inv *invocation) describeConsumerGroups(listed kadm.ListedGroups, names []string) (map[string]consumerGroup, error) {
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	for _, n := range names {
		if listed[n].GroupType == "consumer" {
			req.Groups = append(req.Groups, n)
		}
	}
	if len(req.Groups) == 0 {
		return nil, nil
	}
	resp, err := req.RequestWith(inv.ctx, inv.cl)
	if err != nil {
		return nil, inv.failed("describe consumer groups", err)
	}
	topics, err := inv.topicNames(resp)
	if err != nil {
		return nil, err
	}
	out := map[string]consumerGroup{}
	for _, g := range resp.Groups {
		cg := consumerGroup{state: g.State, assignor: g.AssignorName, epoch: g.Epoch, err: kerr.ErrorForCode(g.ErrorCode)}
		for _, m := range g.Members {
			set := kadm.TopicsSet{}
			for _, tp := range m.Assignment.TopicPartitions {
				name := tp.Topic
				if name == "" {
					name = topics[tp.TopicID]
				}
				set.Add(name, tp.Partitions...)
			}
			cg.members = append(cg.members, groupMember{MemberID: m.MemberID, InstanceID: m.InstanceID, Host: m.ClientHost,
				ClientID: m.ClientID, Assignment: assignment(set)})
		}
		out[g.Group] = cg
	}
	return out, nil
}

// topicNames maps topic ids to names when an answer has assignments
// without names (nil otherwise).
func (inv *invocation) topicNames(resp *kmsg.ConsumerGroupDescribeResponse) (map[[16]byte]string, error) {
	unnamed := false
	for _, g := range resp.Groups {
		for _, m := range g.Members {
			for _, tp := range m.Assignment.TopicPartitions {
				unnamed = unnamed || tp.Topic == ""
			}
		}
	}
	if !unnamed {
		return nil, nil
	}
	details, err := inv.adm.ListTopics(inv.ctx)
	if err != nil {
		return nil, inv.failed("list topics", err)
	}
	out := map[[16]byte]string{}
	for _, d := range details {
		out[d.ID] = d.Topic
	}
	return out, nil
}
