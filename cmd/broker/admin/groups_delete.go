package admin

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

func init() {
	register("groups", &commandSpec{
		name:     "groups delete",
		synopsis: "groups delete --group G [--group G ...]",
		about:    "Deletes consumer groups and their committed offsets. A group with active members is refused.",
		examples: "  broker groups delete --group old-billing\n  broker groups delete --group tmp-1 --group tmp-2",
		setup:    setupGroupsDelete,
	})
	register("groups", &commandSpec{
		name:     "groups delete-offsets",
		synopsis: "groups delete-offsets --group G --topic T[:P,P...] [--topic ...]",
		about: `Deletes a group's committed offsets for topics (every committed partition of
T, or the partitions listed). The broker refuses partitions of topics that the
group's active members consume.`,
		examples: "  broker groups delete-offsets --group billing --topic old-orders\n  broker groups delete-offsets --group billing --topic orders:0,1",
		setup:    setupGroupsDeleteOffsets,
	})
}

func setupGroupsDelete(fs *flagSet) action {
	var groups stringList
	fs.Var(&groups, "group", "`GROUP` to delete (repeatable)")
	return func(inv *invocation) error {
		if len(groups) == 0 {
			return usagef("--group is required")
		}
		adm, err := inv.admin()
		if err != nil {
			return err
		}
		resps, err := adm.DeleteGroups(inv.ctx, groups...)
		if err != nil {
			return inv.failed("delete groups", err)
		}
		var failed []string
		for _, r := range resps.Sorted() {
			if r.Err != nil {
				failed = append(failed, groupError(r.Group, r.Err, "").Error())
				continue
			}
			fmt.Fprintf(inv.stdout, "Deleted group %s.\n", r.Group)
		}
		return joinFailures("groups", failed)
	}
}

func setupGroupsDeleteOffsets(fs *flagSet) action {
	var topics stringList
	group := fs.String("group", "", "`GROUP` whose offsets to delete")
	fs.Var(&topics, "topic", "`TOPIC[:P,P...]` (repeatable)")
	return func(inv *invocation) error {
		if *group == "" {
			return usagef("--group is required")
		}
		if len(topics) == 0 {
			return usagef("--topic is required")
		}
		scope, err := parseScope(topics)
		if err != nil {
			return err
		}
		set, err := inv.committedScope(*group, scope)
		if err != nil {
			return err
		}
		if len(set) == 0 {
			fmt.Fprintf(inv.stdout, "Group %s has no committed offsets for %v; nothing to delete.\n", *group, scope.topics())
			return nil
		}
		resps, err := inv.adm.DeleteOffsets(inv.ctx, *group, set)
		if err != nil {
			return inv.failed("delete offsets", groupError(*group, err, ""))
		}
		return inv.reportDeleted(resps)
	}
}

// committedScope is the partitions of scope: those listed, or for a whole
// topic every partition the group has committed.
func (inv *invocation) committedScope(group string, scope topicScope) (kadm.TopicsSet, error) {
	committed, err := inv.fetchOffsets(group)
	if err != nil {
		return nil, err
	}
	set := kadm.TopicsSet{}
	for topic, parts := range scope {
		if parts != nil {
			set.Add(topic, parts...)
			continue
		}
		for p := range committed[topic] {
			set.Add(topic, p)
		}
	}
	return set, nil
}

// reportDeleted prints a TOPIC PARTITION RESULT table; any partition the
// broker refused fails the command.
func (inv *invocation) reportDeleted(resps kadm.DeleteOffsetsResponses) error {
	t := &tabular{columns: []string{"topic", "partition", "result"}}
	var failed []string
	set := kadm.TopicsSet{}
	for topic, parts := range resps {
		for p := range parts {
			set.Add(topic, p)
		}
	}
	for _, tp := range sortedPartitions(set) {
		err := resps[tp.topic][tp.partition]
		result := "deleted"
		if err != nil {
			result = err.Error()
			if errors.Is(err, kerr.GroupSubscribedToTopic) {
				result = "refused: the group's active members consume this topic"
			}
			failed = append(failed, fmt.Sprintf("delete offsets of %s/%d: %s", tp.topic, tp.partition, result))
		}
		t.add(tp.topic, itoa(tp.partition), result)
	}
	if err := t.writeTable(inv.stdout); err != nil {
		return err
	}
	return joinFailures("partitions", failed)
}
