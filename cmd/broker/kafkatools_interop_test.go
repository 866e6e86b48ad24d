//go:build interop

package main

// Kafka's own command-line tools (kafka-tools 4.4.0, run from their main
// classes as bin/kafka-*.sh run them) against a Sediment broker. What each
// tool prints is read back and compared, fact by fact (partitions, offsets,
// lag, config values), with what the broker's own CLI prints for the same
// state; the formatting is each tool's own.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestInteropKafkaToolsTopics: kafka-topics --create, --list, --alter
// --partitions, --describe and --delete, and the errors it reports.
func TestInteropKafkaToolsTopics(t *testing.T) {
	addr := toolsCluster(t)
	topics := func(args ...string) string { return mustKafkaTool(t, addr, kafkaTopics, args...) }

	out := topics("--create", "--topic", "tools-orders", "--partitions", "3", "--replication-factor", "1", "--config", "retention.ms=3600000")
	if strings.TrimSpace(out) != "Created topic tools-orders." {
		t.Fatalf("kafka-topics --create printed %q", out)
	}
	topics("--create", "--topic", "tools-scratch", "--partitions", "1")
	checkTopicList(t, addr, topics("--list"), "tools-orders", "tools-scratch")

	topics("--alter", "--topic", "tools-orders", "--partitions", "5")
	desc := parseTopicDescribe(t, topics("--describe", "--topic", "tools-orders"))
	if onKafka() {
		// The reference broker's server.properties sets it, so kafka-topics
		// lists it as not a default.
		delete(desc["tools-orders"].configs, "min.insync.replicas")
	}
	checkTopicDescribe(t, desc["tools-orders"], describeTopicCLI(t, addr, "tools-orders"))
	if got := desc["tools-orders"].configs; !maps.Equal(got, map[string]string{"retention.ms": "3600000"}) {
		t.Errorf("kafka-topics --describe: configs %v, want retention.ms=3600000 only", got)
	}
	if all := parseTopicDescribe(t, topics("--describe")); all["tools-scratch"] == nil || all["tools-orders"] == nil {
		t.Errorf("kafka-topics --describe without --topic: topics %v", slices.Sorted(maps.Keys(all)))
	}

	topics("--delete", "--topic", "tools-scratch")
	checkTopicList(t, addr, topics("--list"), "tools-orders")

	// Errors: the same exception classes and exit codes as against Kafka.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--create", "--topic", "tools-orders", "--partitions", "1"}, "TopicExistsException: Topic 'tools-orders' already exists."},
		{[]string{"--delete", "--topic", "tools-missing"}, "Topic 'tools-missing' does not exist as expected"},
		{[]string{"--alter", "--topic", "tools-orders", "--partitions", "2"}, "InvalidPartitionsException"},
		{[]string{"--create", "--topic", "tools-bad", "--config", "retention.ms=abc"}, "Invalid value abc for configuration retention.ms"},
		{[]string{"--create", "--topic", "tools-bad", "--config", "no.such.config=1"}, "InvalidConfigurationException: Unknown topic config name: no.such.config"},
	} {
		r := kafkaTool(t, addr, kafkaTopics, tc.args...)
		if r.code != 1 || !strings.Contains(r.output(), tc.want) {
			t.Errorf("kafka-topics %s: exit %d, want 1 and %q in:\n%s", strings.Join(tc.args, " "), r.code, tc.want, r.output())
		}
	}
	checkTopicList(t, addr, topics("--list"), "tools-orders")
}

// checkTopicList compares kafka-topics --list with want and with `broker
// topics list`.
func checkTopicList(t *testing.T, addr, listed string, want ...string) {
	t.Helper()
	got := strings.Fields(listed)
	var cli []struct {
		Topic string `json:"topic"`
	}
	brokerJSON(t, addr, &cli, "topics", "list")
	var cliNames []string
	for _, c := range cli {
		cliNames = append(cliNames, c.Topic)
	}
	slices.Sort(got)
	slices.Sort(cliNames)
	if !slices.Equal(got, want) || !slices.Equal(cliNames, want) {
		t.Errorf("topics: kafka-topics --list %v, broker topics list %v, want %v", got, cliNames, want)
	}
}

// checkTopicDescribe compares kafka-topics --describe of one topic with
// `broker topics describe`.
func checkTopicDescribe(t *testing.T, tool *toolTopic, cli cliTopic) {
	t.Helper()
	if tool == nil {
		t.Fatalf("kafka-topics --describe: no topic %s", cli.Topic)
	}
	if tool.partitionCount != len(cli.Partitions) || len(tool.partitions) != len(cli.Partitions) {
		t.Errorf("%s: kafka-topics says %d partitions (%d listed), broker %d", cli.Topic, tool.partitionCount, len(tool.partitions), len(cli.Partitions))
	}
	if tool.replicationFactor != cli.ReplicationFactor {
		t.Errorf("%s: replication factor %d, broker %d", cli.Topic, tool.replicationFactor, cli.ReplicationFactor)
	}
	if !maps.Equal(tool.configs, cli.Configs) {
		t.Errorf("%s: configs %v, broker %v", cli.Topic, tool.configs, cli.Configs)
	}
	for i, p := range tool.partitions {
		if i >= len(cli.Partitions) {
			break
		}
		c := cli.Partitions[i]
		want := fmt.Sprintf("%d %d %s %s", c.Partition, c.Leader, int32s(c.Replicas), int32s(c.ISR))
		got := fmt.Sprintf("%s %s %s %s", p["Partition"], p["Leader"], p["Replicas"], p["Isr"])
		if got != want {
			t.Errorf("%s: partition, leader, replicas, isr %q, broker %q", cli.Topic, got, want)
		}
	}
}

func int32s(v []int32) string {
	var s []string
	for _, n := range v {
		s = append(s, strconv.Itoa(int(n)))
	}
	return strings.Join(s, ",")
}

// TestInteropKafkaToolsGroups: kafka-consumer-groups --list, --describe
// (offsets with lag, --members, --state), --delete-offsets and --delete,
// for an idle group with commits and a live one.
func TestInteropKafkaToolsGroups(t *testing.T) {
	addr := toolsCluster(t)
	const topic = "tools-events"
	createTopics(t, addr, topic, 3)
	for p := range int32(3) {
		produceTo(t, addr, topic, p, 10*int(p+1), time.Time{})
	}
	consumeAndCommit(t, addr, "tools-idle", 60, topic)
	produceTo(t, addr, topic, 0, 5, time.Time{}) // lag 5 on partition 0
	live := startLiveMember(t, addr, "tools-live", topic)
	groups := func(args ...string) string { return mustKafkaTool(t, addr, kafkaConsumerGroups, args...) }

	checkGroupList(t, addr, groups("--list", "--state"), map[string]string{"tools-idle": "Empty", "tools-live": "Stable"})
	checkGroupOffsets(t, addr, "tools-idle", groups("--describe", "--group", "tools-idle"))
	checkGroupOffsets(t, addr, "tools-live", groups("--describe", "--group", "tools-live"))
	checkGroupMembers(t, addr, "tools-live", live, groups("--describe", "--group", "tools-live", "--members", "--verbose"))
	checkGroupState(t, addr, "tools-live", groups("--describe", "--group", "tools-live", "--state"))
	checkGroupState(t, addr, "tools-idle", groups("--describe", "--group", "tools-idle", "--state"))

	// A live group's offsets are not reset, and it is not deleted.
	r := kafkaTool(t, addr, kafkaConsumerGroups, "--reset-offsets", "--group", "tools-live", "--topic", topic, "--to-earliest", "--execute")
	if !strings.Contains(r.output(), "Assignments can only be reset if the group 'tools-live' is inactive, but the current state is Stable.") {
		t.Errorf("reset of a live group: exit %d\n%s", r.code, r.output())
	}
	if got := committed(t, kadmFor(t, addr), "tools-live"); got[topic+"/0"] != 15 {
		t.Errorf("refused reset changed the live group's commits: %v", got)
	}
	r = kafkaTool(t, addr, kafkaConsumerGroups, "--delete", "--group", "tools-live")
	if !strings.Contains(r.output(), "Group 'tools-live' could not be deleted due to: org.apache.kafka.common.errors.GroupNotEmptyException") {
		t.Errorf("delete of a live group:\n%s", r.output())
	}

	checkDeleteOffsets(t, addr, topic)
	out := groups("--delete", "--group", "tools-idle")
	if !strings.Contains(out, "Deletion of requested consumer groups ('tools-idle') was successful.") {
		t.Errorf("kafka-consumer-groups --delete printed:\n%s", out)
	}
	r = kafkaTool(t, addr, kafkaConsumerGroups, "--delete", "--group", "tools-idle")
	if !strings.Contains(r.output(), "GroupIdNotFoundException") {
		t.Errorf("second --delete of tools-idle:\n%s", r.output())
	}
	checkGroupList(t, addr, groups("--list", "--state"), map[string]string{"tools-live": "Stable"})
}

// liveMember is a group member that keeps polling until the test ends.
type liveMember struct {
	client   *kgo.Client
	clientID string
}

// startLiveMember joins group with a franz-go consumer that reads topic
// from the start and commits, and waits until the group is Stable with
// every record committed.
func startLiveMember(t *testing.T, addr, group, topic string) *liveMember {
	t.Helper()
	m := &liveMember{clientID: group + "-client"}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ClientID(m.clientID),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.AutoCommitInterval(100*time.Millisecond), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	m.client = cl
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			cl.PollFetches(ctx)
		}
	}()
	t.Cleanup(func() { cancel(); <-done; cl.Close() })
	adm := kadmFor(t, addr)
	waitFor(t, group+" to be Stable with its offsets committed", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		lags, err := adm.Lag(ctx, group)
		if err != nil || lags[group].State != "Stable" {
			return false
		}
		return lags[group].Lag.Total() == 0 && len(lags[group].Lag.Sorted()) > 0
	})
	return m
}

// checkGroupList compares kafka-consumer-groups --list --state with want
// (group -> state) and with `broker groups list`.
func checkGroupList(t *testing.T, addr, listed string, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, row := range parseToolTable(listed) {
		got[row["GROUP"]] = row["STATE"]
	}
	var cli []struct {
		Group string `json:"group"`
		State string `json:"state"`
	}
	brokerJSON(t, addr, &cli, "groups", "list")
	cliGot := map[string]string{}
	for _, g := range cli {
		cliGot[g.Group] = g.State
	}
	if !maps.Equal(got, want) || !maps.Equal(cliGot, want) {
		t.Errorf("groups: kafka-consumer-groups --list --state %v, broker groups list %v, want %v", got, cliGot, want)
	}
}

// checkGroupOffsets compares kafka-consumer-groups --describe (current
// offset, log end, lag, consumer) with `broker groups describe`. The tool
// lists the partitions with a commit or an owner; those must match.
func checkGroupOffsets(t *testing.T, addr, group, described string) {
	t.Helper()
	cli := groupOffsetsCLI(t, addr, group)
	rows := parseToolTable(described)
	if len(rows) == 0 {
		t.Fatalf("kafka-consumer-groups --describe --group %s: no rows in\n%s", group, described)
	}
	for _, row := range rows {
		key := row["TOPIC"] + "/" + row["PARTITION"]
		c, ok := cli[key]
		if !ok {
			t.Errorf("%s %s: in kafka-consumer-groups, not in broker groups describe", group, key)
			continue
		}
		want := []string{optOffset(c.CurrentOffset), optOffset(c.LogEndOffset), optOffset(c.Lag), orDash(c.ConsumerID), orDash(c.Host), orDash(c.ClientID)}
		got := []string{row["CURRENT-OFFSET"], row["LOG-END-OFFSET"], row["LAG"], row["CONSUMER-ID"], row["HOST"], row["CLIENT-ID"]}
		if c.CurrentOffset == nil {
			want[2] = "-" // the broker's CLI says lag 0 where nothing is committed
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s %s: kafka-consumer-groups %v, broker groups describe %v", group, key, got, want)
		}
	}
	if len(rows) != len(cli) {
		t.Errorf("%s: kafka-consumer-groups lists %d partitions, broker groups describe %d", group, len(rows), len(cli))
	}
}

func optOffset(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// checkGroupMembers compares kafka-consumer-groups --describe --members
// --verbose with `broker groups describe --members` and the member itself.
func checkGroupMembers(t *testing.T, addr, group string, live *liveMember, described string) {
	t.Helper()
	var cli []struct {
		Members []struct {
			MemberID   string `json:"member_id"`
			Host       string `json:"host"`
			ClientID   string `json:"client_id"`
			Assignment []struct {
				Topic      string  `json:"topic"`
				Partitions []int32 `json:"partitions"`
			} `json:"assignment"`
		} `json:"members"`
	}
	brokerJSON(t, addr, &cli, "groups", "describe", "--group", group, "--members")
	rows := parseToolTable(described)
	if len(cli) != 1 || len(cli[0].Members) != 1 || len(rows) != 1 {
		t.Fatalf("%s: want one member; broker: %+v; kafka-consumer-groups:\n%s", group, cli, described)
	}
	m, row := cli[0].Members[0], rows[0]
	memberID, _ := live.client.GroupMetadata()
	var assignment []string
	n := 0
	for _, a := range m.Assignment {
		assignment = append(assignment, a.Topic+":"+int32s(a.Partitions))
		n += len(a.Partitions)
	}
	want := []string{memberID, m.Host, live.clientID, strconv.Itoa(n), strings.Join(assignment, ";")}
	got := []string{row["CONSUMER-ID"], row["HOST"], row["CLIENT-ID"], row["#PARTITIONS"], row["CURRENT-ASSIGNMENT"]}
	if m.MemberID != memberID || !slices.Equal(got, want) {
		t.Errorf("%s member: kafka-consumer-groups %v, broker groups describe --members %v (member id %s)", group, got, want, m.MemberID)
	}
}

// checkGroupState compares kafka-consumer-groups --describe --state with
// `broker groups describe --state`.
func checkGroupState(t *testing.T, addr, group, described string) {
	t.Helper()
	var cli []struct {
		State struct {
			State              string `json:"state"`
			AssignmentStrategy string `json:"assignment_strategy"`
			Members            int    `json:"members"`
			Coordinator        struct {
				NodeID int32  `json:"node_id"`
				Host   string `json:"host"`
				Port   int32  `json:"port"`
			} `json:"coordinator"`
		} `json:"state"`
	}
	brokerJSON(t, addr, &cli, "groups", "describe", "--group", group, "--state")
	rows := parseToolTable(described)
	if len(cli) != 1 || len(rows) != 1 {
		t.Fatalf("%s: want one group; broker: %+v; kafka-consumer-groups:\n%s", group, cli, described)
	}
	s, row := cli[0].State, rows[0]
	want := []string{fmt.Sprintf("%s:%d", s.Coordinator.Host, s.Coordinator.Port), fmt.Sprintf("(%d)", s.Coordinator.NodeID), orDash(s.AssignmentStrategy), s.State, strconv.Itoa(s.Members)}
	got := []string{row["COORDINATOR"], row["(ID)"], row["ASSIGNMENT-STRATEGY"], row["STATE"], row["#MEMBERS"]}
	if !slices.Equal(got, want) {
		t.Errorf("%s state: kafka-consumer-groups %v, broker groups describe --state %v", group, got, want)
	}
}

// checkDeleteOffsets deletes one partition's commit of tools-idle, then
// asks for partitions that do not exist.
func checkDeleteOffsets(t *testing.T, addr, topic string) {
	t.Helper()
	out := mustKafkaTool(t, addr, kafkaConsumerGroups, "--delete-offsets", "--group", "tools-idle", "--topic", topic+":2")
	rows := parseToolTable(out)
	if len(rows) != 1 || rows[0]["PARTITION"] != "2" || rows[0]["STATUS"] != "Successful" {
		t.Errorf("--delete-offsets %s:2: %v\n%s", topic, rows, out)
	}
	got := committed(t, kadmFor(t, addr), "tools-idle")
	want := map[string]int64{topic + "/0": 10, topic + "/1": 20}
	if !maps.Equal(got, want) {
		t.Errorf("tools-idle commits after --delete-offsets: %v, want %v", got, want)
	}
	cli := groupOffsetsCLI(t, addr, "tools-idle")
	if c := cli[topic+"/2"]; c.CurrentOffset != nil {
		t.Errorf("broker groups describe still shows a commit on %s/2: %d", topic, *c.CurrentOffset)
	}
	for _, missing := range []string{topic + ":7", "tools-missing"} {
		r := kafkaTool(t, addr, kafkaConsumerGroups, "--delete-offsets", "--group", "tools-idle", "--topic", missing)
		if !strings.Contains(r.output(), "UnknownTopicOrPartitionException") {
			t.Errorf("--delete-offsets --topic %s:\n%s", missing, r.output())
		}
	}
}
