package admin

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

func init() {
	register("groups", &commandSpec{
		name:     "groups describe",
		synopsis: "groups describe (--group G ... | --all-groups) [--offsets] [--members] [--state] [--output table|json|csv]",
		about: `Describes consumer groups. Views (--offsets is the default; several may be
combined, except with --output csv):
  --offsets  per partition: GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET
             LAG CONSUMER-ID HOST CLIENT-ID, for every partition the group
             has committed or is assigned (lag from the log start offset
             where nothing is committed yet)
  --members  per member: id, group.instance.id, host, client id, assigned
             partitions
  --state    state, protocol type, assignment strategy, member count and
             coordinator. The classic DescribeGroups answer has no generation,
             so none is shown.`,
		examples: "  broker groups describe --group billing\n  broker groups describe --all-groups --members --state\n  broker groups describe --group billing --output json",
		read:     true,
		setup:    setupGroupsDescribe,
	})
}

// groupViews are the views `groups describe` was asked for.
type groupViews struct{ offsets, members, state bool }

func setupGroupsDescribe(fs *flagSet) action {
	var groups stringList
	var v groupViews
	fs.Var(&groups, "group", "`GROUP` to describe (repeatable)")
	all := fs.Bool("all-groups", false, "describe every group")
	fs.BoolVar(&v.offsets, "offsets", false, "per-partition offsets and lag (the default view)")
	fs.BoolVar(&v.members, "members", false, "the members and their assignments")
	fs.BoolVar(&v.state, "state", false, "state, protocol and coordinator")
	return func(inv *invocation) error {
		if err := checkDescribeFlags(groups, *all, &v, inv.common.output); err != nil {
			return err
		}
		names := []string(groups)
		if *all {
			listed, err := inv.listGroups(nil)
			if err != nil {
				return err
			}
			names = listed.Groups()
		}
		lags, failed, err := inv.describeGroups(names)
		if err != nil {
			return err
		}
		if len(lags) > 0 || len(failed) == 0 {
			if err := inv.emit(groupsView(lags, v)); err != nil {
				return err
			}
		}
		return joinFailures("groups", failed)
	}
}

func checkDescribeFlags(groups []string, all bool, v *groupViews, output string) error {
	switch {
	case len(groups) == 0 && !all:
		return usagef("--group or --all-groups is required")
	case len(groups) > 0 && all:
		return usagef("--group and --all-groups exclude each other")
	}
	n := 0
	for _, on := range []bool{v.offsets, v.members, v.state} {
		if on {
			n++
		}
	}
	if n == 0 {
		v.offsets = true
	}
	if n > 1 && output == "csv" {
		return usagef("--output csv prints one view: give only one of --offsets, --members, --state")
	}
	return nil
}

// describeGroups describes groups with their lag. Groups that could not be
// described are left out and named in failed.
func (inv *invocation) describeGroups(names []string) ([]kadm.DescribedGroupLag, []string, error) {
	if len(names) == 0 {
		return nil, nil, nil // kadm would describe every group
	}
	adm, err := inv.admin()
	if err != nil {
		return nil, nil, err
	}
	lags, err := adm.Lag(inv.ctx, names...)
	if err != nil {
		return nil, nil, inv.failed("describe groups", err)
	}
	var out []kadm.DescribedGroupLag
	var failed []string
	for _, l := range lags.Sorted() {
		switch {
		case l.DescribeErr != nil:
			failed = append(failed, groupError(l.Group, l.DescribeErr, "").Error())
		case l.FetchErr != nil:
			failed = append(failed, fmt.Sprintf("group %s: fetch offsets: %v", l.Group, l.FetchErr))
		case l.State == "Dead":
			failed = append(failed, fmt.Sprintf("group %s: no such group", l.Group))
		default:
			out = append(out, l)
		}
	}
	return out, failed, nil
}

// groupsView builds the requested views of described groups.
func groupsView(lags []kadm.DescribedGroupLag, v groupViews) view {
	var tables []*tabular
	js := []map[string]any{}
	offsets, members, states := offsetRows(), memberRows(), stateRows()
	for _, l := range lags {
		g := map[string]any{"group": l.Group}
		if v.offsets {
			g["offsets"] = addOffsets(offsets, l)
		}
		if v.members {
			g["members"] = addMembers(members, l)
		}
		if v.state {
			g["state"] = addState(states, l)
		}
		js = append(js, g)
	}
	for _, t := range []struct {
		on bool
		t  *tabular
	}{{v.offsets, offsets}, {v.members, members}, {v.state, states}} {
		if t.on {
			tables = append(tables, t.t)
		}
	}
	text := func(w io.Writer) error {
		for i, t := range tables {
			if i > 0 {
				fmt.Fprintln(w)
			}
			if err := t.writeTable(w); err != nil {
				return err
			}
		}
		return nil
	}
	return view{rows: tables[0], text: text, json: js}
}

// groupOffset is one partition of the offsets view.
type groupOffset struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	CurrentOffset *int64 `json:"current_offset"`
	LogEndOffset  *int64 `json:"log_end_offset"`
	Lag           *int64 `json:"lag"`
	ConsumerID    string `json:"consumer_id"`
	Host          string `json:"host"`
	ClientID      string `json:"client_id"`
	Error         string `json:"error,omitempty"`
}

func offsetRows() *tabular {
	return &tabular{columns: []string{"group", "topic", "partition", "current_offset", "log_end_offset", "lag", "consumer_id", "host", "client_id"}}
}

func addOffsets(t *tabular, l kadm.DescribedGroupLag) []groupOffset {
	out := []groupOffset{}
	for _, ml := range l.Lag.Sorted() {
		o := groupOffset{Topic: ml.Topic, Partition: ml.Partition}
		if ml.Commit.At >= 0 {
			o.CurrentOffset = &ml.Commit.At
		}
		if ml.End.Err == nil {
			o.LogEndOffset = &ml.End.Offset
		}
		if ml.Lag >= 0 {
			o.Lag = &ml.Lag
		}
		if ml.Err != nil {
			o.Error = ml.Err.Error()
		}
		if m := ml.Member; m != nil {
			o.ConsumerID, o.Host, o.ClientID = m.MemberID, m.ClientHost, m.ClientID
		}
		t.add(l.Group, o.Topic, itoa(o.Partition), optInt(o.CurrentOffset), optInt(o.LogEndOffset), optInt(o.Lag), o.ConsumerID, o.Host, o.ClientID)
		out = append(out, o)
	}
	return out
}

// groupMember is one member of the members view.
type groupMember struct {
	MemberID   string            `json:"member_id"`
	InstanceID *string           `json:"instance_id"`
	Host       string            `json:"host"`
	ClientID   string            `json:"client_id"`
	Assignment []topicPartitions `json:"assignment"`
}

type topicPartitions struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

func memberRows() *tabular {
	return &tabular{columns: []string{"group", "consumer_id", "instance_id", "host", "client_id", "partitions", "assignment"}}
}

// addMembers lists members by client id, instance id, then member id: the
// names an operator chose come first.
func addMembers(t *tabular, l kadm.DescribedGroupLag) []groupMember {
	out := []groupMember{}
	for _, m := range l.Members {
		gm := groupMember{MemberID: m.MemberID, InstanceID: m.InstanceID, Host: m.ClientHost, ClientID: m.ClientID, Assignment: []topicPartitions{}}
		if a, ok := m.Assigned.AsConsumer(); ok {
			for _, at := range a.Topics {
				parts := append([]int32(nil), at.Partitions...)
				sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
				gm.Assignment = append(gm.Assignment, topicPartitions{at.Topic, parts})
			}
		}
		sort.Slice(gm.Assignment, func(i, j int) bool { return gm.Assignment[i].Topic < gm.Assignment[j].Topic })
		out = append(out, gm)
	}
	sort.Slice(out, func(i, j int) bool { return memberKey(out[i]) < memberKey(out[j]) })
	for _, m := range out {
		n, parts := 0, make([]string, 0, len(m.Assignment))
		for _, a := range m.Assignment {
			n += len(a.Partitions)
			parts = append(parts, a.Topic+":"+int32List(a.Partitions))
		}
		t.add(l.Group, m.MemberID, deref(m.InstanceID), m.Host, m.ClientID, itoa(n), strings.Join(parts, " "))
	}
	return out
}

func memberKey(m groupMember) string {
	return m.ClientID + "\x00" + deref(m.InstanceID) + "\x00" + m.MemberID
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// groupState is the state view of one group.
type groupState struct {
	State              string      `json:"state"`
	ProtocolType       string      `json:"protocol_type"`
	AssignmentStrategy string      `json:"assignment_strategy"`
	Members            int         `json:"members"`
	Coordinator        coordinator `json:"coordinator"`
}

type coordinator struct {
	NodeID int32  `json:"node_id"`
	Host   string `json:"host"`
	Port   int32  `json:"port"`
}

func stateRows() *tabular {
	return &tabular{columns: []string{"group", "coordinator", "state", "protocol_type", "assignment_strategy", "members"}}
}

func addState(t *tabular, l kadm.DescribedGroupLag) groupState {
	c := l.Coordinator
	s := groupState{State: l.State, ProtocolType: l.ProtocolType, AssignmentStrategy: l.Protocol, Members: len(l.Members),
		Coordinator: coordinator{NodeID: c.NodeID, Host: c.Host, Port: c.Port}}
	t.add(l.Group, fmt.Sprintf("%s:%d (id %d)", c.Host, c.Port, c.NodeID), s.State, s.ProtocolType, s.AssignmentStrategy, itoa(s.Members))
	return s
}
