package admin

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// topicScope is the partitions a command acts on: per topic, the listed
// partitions, or nil for every partition of the topic.
type topicScope map[string][]int32

// parseScope parses --topic values: T for every partition of T, T:P,P,...
// for those partitions. A topic named twice merges; naming it whole wins.
func parseScope(values []string) (topicScope, error) {
	scope, whole := topicScope{}, map[string]bool{}
	for _, v := range values {
		topic, parts, hasParts := strings.Cut(v, ":")
		if topic == "" || hasParts && parts == "" {
			return nil, usagef("--topic %q: want TOPIC or TOPIC:PARTITION,PARTITION...", v)
		}
		if !hasParts {
			whole[topic] = true
			continue
		}
		for _, p := range strings.Split(parts, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
			if err != nil || n < 0 {
				return nil, usagef("--topic %q: partition %q is not a partition number", v, p)
			}
			scope[topic] = append(scope[topic], int32(n))
		}
	}
	for topic := range whole {
		scope[topic] = nil
	}
	return scope, nil
}

func (s topicScope) topics() []string { return sortedKeys(s) }

// resolve turns the scope into a set of existing partitions, using the
// cluster's metadata for whole topics. A missing topic or partition is an
// error naming it.
func (inv *invocation) resolve(s topicScope) (kadm.TopicsSet, error) {
	adm, err := inv.admin()
	if err != nil {
		return nil, err
	}
	details, err := adm.ListTopics(inv.ctx, s.topics()...)
	if err != nil {
		return nil, inv.failed("list topics", err)
	}
	set := kadm.TopicsSet{}
	for _, topic := range s.topics() {
		d, ok := details[topic]
		switch {
		case !ok || d.Err == kerr.UnknownTopicOrPartition:
			return nil, fmt.Errorf("no such topic: %s", topic)
		case d.Err != nil:
			return nil, fmt.Errorf("topic %s: %w", topic, d.Err)
		}
		parts := s[topic]
		if parts == nil {
			parts = d.Partitions.Numbers()
		}
		for _, p := range parts {
			if _, ok := d.Partitions[p]; !ok {
				return nil, fmt.Errorf("topic %s has no partition %d (it has %d)", topic, p, len(d.Partitions))
			}
		}
		set.Add(topic, parts...)
	}
	return set, nil
}

// topicPartition names one partition.
type topicPartition struct {
	topic     string
	partition int32
}

// sortedPartitions lists a set's partitions by topic, then partition.
func sortedPartitions(set kadm.TopicsSet) []topicPartition {
	var out []topicPartition
	for topic, parts := range set {
		for p := range parts {
			out = append(out, topicPartition{topic, p})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].topic != out[j].topic {
			return out[i].topic < out[j].topic
		}
		return out[i].partition < out[j].partition
	})
	return out
}
