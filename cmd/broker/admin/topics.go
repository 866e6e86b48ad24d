package admin

import (
	"fmt"
	"io"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// tableStatusPrefix starts the names of the read-only DescribeConfigs
// entries with which a table topic reports its status.
const tableStatusPrefix = "sediment.table.status."

func init() {
	register("topics", &commandSpec{
		name:     "topics list",
		synopsis: "topics list [--internal] [--output table|json|csv]",
		about:    "Lists the topics of the cluster, sorted by name, with their partition count and replication factor.",
		examples: "  broker topics list\n  broker topics list --output json --bootstrap-server broker-1:9092",
		read:     true,
		setup:    setupTopicsList,
	})
	register("topics", &commandSpec{
		name:     "topics describe",
		synopsis: "topics describe [--topic T ...] [--all-configs] [--output table|json|csv]",
		about: `Describes topics (every topic without --topic): per partition the leader,
replicas, in-sync replicas and the log start and end offsets; the configs set
on the topic (every config with --all-configs); and, for a table topic, its
status (the sediment.table.status.* entries) in a "Table" section. CSV has
one row per partition.`,
		examples: "  broker topics describe --topic orders\n  broker topics describe --topic orders --topic payments --all-configs --output json",
		read:     true,
		setup:    setupTopicsDescribe,
	})
}

func setupTopicsList(fs *flagSet) action {
	internal := fs.Bool("internal", false, "also list internal topics")
	return func(inv *invocation) error {
		details, err := inv.listTopics(*internal)
		if err != nil {
			return err
		}
		rows := &tabular{columns: []string{"topic", "partitions", "replication_factor"}}
		type topicJSON struct {
			Topic             string `json:"topic"`
			Partitions        int    `json:"partitions"`
			ReplicationFactor int    `json:"replication_factor"`
		}
		list := []topicJSON{}
		for _, d := range details.Sorted() {
			rows.add(d.Topic, itoa(len(d.Partitions)), itoa(d.Partitions.NumReplicas()))
			list = append(list, topicJSON{d.Topic, len(d.Partitions), d.Partitions.NumReplicas()})
		}
		return inv.emit(view{rows: rows, json: list})
	}
}

// listTopics returns every topic of the cluster.
func (inv *invocation) listTopics(internal bool) (kadm.TopicDetails, error) {
	adm, err := inv.admin()
	if err != nil {
		return nil, err
	}
	list := adm.ListTopics
	if internal {
		list = adm.ListTopicsWithInternal
	}
	details, err := list(inv.ctx)
	if err != nil {
		return nil, inv.failed("list topics", err)
	}
	return details, nil
}

// topicDescription is what `topics describe` reports of one topic.
type topicDescription struct {
	Topic             string            `json:"topic"`
	ReplicationFactor int               `json:"replication_factor"`
	Partitions        []partitionState  `json:"partitions"`
	Configs           map[string]string `json:"configs"`
	TableStatus       map[string]string `json:"table_status,omitempty"`
	tableStatusOrder  []string          // TableStatus keys in the broker's order
}

// partitionState is one partition of a described topic. An offset is null
// when the partition could not be listed.
type partitionState struct {
	Partition      int32   `json:"partition"`
	Leader         int32   `json:"leader"`
	Replicas       []int32 `json:"replicas"`
	ISR            []int32 `json:"isr"`
	LogStartOffset *int64  `json:"log_start_offset"`
	LogEndOffset   *int64  `json:"log_end_offset"`
	Error          string  `json:"error,omitempty"`
}

func setupTopicsDescribe(fs *flagSet) action {
	var topics stringList
	fs.Var(&topics, "topic", "`TOPIC` to describe (repeatable; default: every topic)")
	allConfigs := fs.Bool("all-configs", false, "list every config, defaults included, not only those set on the topic")
	return func(inv *invocation) error {
		descs, missing, err := inv.describeTopics(topics, *allConfigs)
		if err != nil {
			return err
		}
		if err := inv.emit(view{rows: topicRows(descs), text: topicText(descs), json: descs}); err != nil {
			return err
		}
		if len(missing) > 0 {
			return fmt.Errorf("no such topic: %s", strings.Join(missing, ", "))
		}
		return nil
	}
}

// describeTopics gathers metadata, log offsets and configs of topics (all
// when none is named), and names the requested topics that do not exist.
func (inv *invocation) describeTopics(topics []string, allConfigs bool) ([]topicDescription, []string, error) {
	adm, err := inv.admin()
	if err != nil {
		return nil, nil, err
	}
	details, err := adm.ListTopics(inv.ctx, topics...)
	if err != nil {
		return nil, nil, inv.failed("describe topics", err)
	}
	var missing, names []string
	for _, d := range details.Sorted() {
		switch {
		case d.Err == kerr.UnknownTopicOrPartition:
			missing = append(missing, d.Topic)
		case d.Err != nil:
			return nil, nil, fmt.Errorf("describe topic %s: %w", d.Topic, d.Err)
		default:
			names = append(names, d.Topic)
		}
	}
	descs := []topicDescription{}
	if len(names) == 0 {
		return descs, missing, nil
	}
	starts, ends, err := inv.logOffsets(names)
	if err != nil {
		return nil, nil, err
	}
	configs, err := inv.topicConfigs(names)
	if err != nil {
		return nil, nil, err
	}
	for _, name := range names {
		descs = append(descs, describeTopic(details[name], starts, ends, configs[name], allConfigs))
	}
	return descs, missing, nil
}

// topicConfigs returns the configs of each topic (DescribeConfigs).
func (inv *invocation) topicConfigs(topics []string) (map[string][]kadm.Config, error) {
	rcs, err := inv.adm.DescribeTopicConfigs(inv.ctx, topics...)
	if err != nil {
		return nil, inv.failed("describe topic configs", err)
	}
	out := map[string][]kadm.Config{}
	for _, name := range topics {
		rc, err := rcs.On(name, nil)
		if err == nil {
			err = rc.Err
		}
		if err != nil {
			return nil, fmt.Errorf("describe configs of topic %s: %w", name, withMessage(err, rc.ErrMessage))
		}
		out[name] = rc.Configs
	}
	return out, nil
}

// logOffsets lists the log start and end offsets of topics.
func (inv *invocation) logOffsets(topics []string) (starts, ends kadm.ListedOffsets, err error) {
	starts, err = inv.adm.ListStartOffsets(inv.ctx, topics...)
	if err != nil {
		return nil, nil, inv.failed("list log start offsets", err)
	}
	ends, err = inv.adm.ListEndOffsets(inv.ctx, topics...)
	if err != nil {
		return nil, nil, inv.failed("list log end offsets", err)
	}
	return starts, ends, nil
}

func describeTopic(d kadm.TopicDetail, starts, ends kadm.ListedOffsets, configs []kadm.Config, allConfigs bool) topicDescription {
	td := topicDescription{Topic: d.Topic, ReplicationFactor: d.Partitions.NumReplicas(), Configs: map[string]string{}}
	for _, p := range d.Partitions.Sorted() {
		ps := partitionState{Partition: p.Partition, Leader: p.Leader, Replicas: nonNil(p.Replicas), ISR: nonNil(p.ISR)}
		ps.LogStartOffset = listedOffset(starts, d.Topic, p.Partition)
		ps.LogEndOffset = listedOffset(ends, d.Topic, p.Partition)
		if p.Err != nil {
			ps.Error = p.Err.Error()
		}
		td.Partitions = append(td.Partitions, ps)
	}
	for _, c := range configs {
		value := c.MaybeValue()
		if c.Sensitive {
			value = "(sensitive)"
		}
		switch {
		case strings.HasPrefix(c.Key, tableStatusPrefix):
			if td.TableStatus == nil {
				td.TableStatus = map[string]string{}
			}
			name := strings.TrimPrefix(c.Key, tableStatusPrefix)
			td.TableStatus[name] = value
			td.tableStatusOrder = append(td.tableStatusOrder, name)
		case allConfigs || c.Source == kmsg.ConfigSourceDynamicTopicConfig:
			td.Configs[c.Key] = value
		}
	}
	return td
}

func listedOffset(l kadm.ListedOffsets, topic string, partition int32) *int64 {
	o, ok := l.Lookup(topic, partition)
	if !ok || o.Err != nil {
		return nil
	}
	return &o.Offset
}

func nonNil(ns []int32) []int32 {
	if ns == nil {
		return []int32{}
	}
	return ns
}

// topicRows is the CSV of described topics: one row per partition.
func topicRows(descs []topicDescription) *tabular {
	t := &tabular{columns: []string{"topic", "partition", "leader", "replicas", "isr", "log_start_offset", "log_end_offset"}}
	for _, d := range descs {
		for _, p := range d.Partitions {
			t.add(d.Topic, itoa(p.Partition), leaderCell(p.Leader), int32List(p.Replicas), int32List(p.ISR),
				optInt(p.LogStartOffset), optInt(p.LogEndOffset))
		}
	}
	return t
}

func leaderCell(leader int32) string {
	if leader < 0 {
		return "none"
	}
	return itoa(leader)
}

// topicText prints each topic as a heading line, its partitions, its
// configs and, for a table topic, its table status.
func topicText(descs []topicDescription) func(io.Writer) error {
	return func(w io.Writer) error {
		for i, d := range descs {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "Topic: %s (%d partitions, replication factor %d)\n", d.Topic, len(d.Partitions), d.ReplicationFactor)
			parts := &tabular{columns: []string{"partition", "leader", "replicas", "isr", "log_start_offset", "log_end_offset"}}
			for _, p := range d.Partitions {
				parts.add(itoa(p.Partition), leaderCell(p.Leader), int32List(p.Replicas), int32List(p.ISR), optInt(p.LogStartOffset), optInt(p.LogEndOffset))
			}
			if err := parts.writeTable(w); err != nil {
				return err
			}
			if err := writeSection(w, "Configs:", []string{"config", "value"}, d.Configs, sortedKeys(d.Configs)); err != nil {
				return err
			}
			if err := writeSection(w, "Table:", []string{"status", "value"}, d.TableStatus, d.tableStatusOrder); err != nil {
				return err
			}
		}
		return nil
	}
}

// writeSection prints a titled two-column table of kv in the order of
// keys, or nothing when kv is empty.
func writeSection(w io.Writer, title string, columns []string, kv map[string]string, keys []string) error {
	if len(kv) == 0 {
		return nil
	}
	t := &tabular{columns: columns}
	for _, k := range keys {
		t.add(k, kv[k])
	}
	fmt.Fprintf(w, "\n%s\n", title)
	return t.writeTable(w)
}
