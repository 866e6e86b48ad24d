package admin

import (
	"fmt"
	"io"
	"strings"
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
  --state    type, state, protocol type, assignment strategy, generation,
             member count and coordinator. The generation is the group epoch
             of KIP-848 consumer groups; the classic DescribeGroups answer
             carries none, so classic groups show "-".

KIP-848 consumer groups (type consumer in groups list) are described with
ConsumerGroupDescribe, classic groups with DescribeGroups.`,
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
	fs.BoolVar(&v.state, "state", false, "type, state, protocol, generation and coordinator")
	return func(inv *invocation) error {
		if err := checkDescribeFlags(groups, *all, &v, inv.common.output); err != nil {
			return err
		}
		listed, err := inv.listGroups(nil)
		if err != nil {
			return err
		}
		names := []string(groups)
		if *all {
			names = listed.Groups()
		}
		infos, failed, err := inv.describeGroups(names, listed)
		if err != nil {
			return err
		}
		if len(infos) > 0 || len(failed) == 0 {
			if err := inv.emit(groupsView(infos, v)); err != nil {
				return err
			}
		}
		return joinErrors("groups", failed)
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

// groupsView builds the requested views of described groups.
func groupsView(infos []groupInfo, v groupViews) view {
	var tables []*tabular
	js := []map[string]any{}
	offsets, members, states := offsetRows(), memberRows(), stateRows()
	for i := range infos {
		l := &infos[i]
		g := map[string]any{"group": l.name}
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

func addOffsets(t *tabular, g *groupInfo) []groupOffset {
	out := []groupOffset{}
	owners := g.owners()
	for _, ml := range g.lag {
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
		if m := owners[topicPartition{ml.Topic, ml.Partition}]; m != nil {
			o.ConsumerID, o.Host, o.ClientID = m.MemberID, m.Host, m.ClientID
		}
		t.add(g.name, o.Topic, itoa(o.Partition), optInt(o.CurrentOffset), optInt(o.LogEndOffset), optInt(o.Lag), o.ConsumerID, o.Host, o.ClientID)
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

func addMembers(t *tabular, g *groupInfo) []groupMember {
	for _, m := range g.members {
		n, parts := 0, make([]string, 0, len(m.Assignment))
		for _, a := range m.Assignment {
			n += len(a.Partitions)
			parts = append(parts, a.Topic+":"+int32List(a.Partitions))
		}
		t.add(g.name, m.MemberID, deref(m.InstanceID), m.Host, m.ClientID, itoa(n), strings.Join(parts, " "))
	}
	if g.members == nil {
		return []groupMember{}
	}
	return g.members
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// groupState is the state view of one group.
type groupState struct {
	Type               string      `json:"type"`
	State              string      `json:"state"`
	ProtocolType       string      `json:"protocol_type"`
	AssignmentStrategy string      `json:"assignment_strategy"`
	Generation         *int32      `json:"generation"`
	Members            int         `json:"members"`
	Coordinator        coordinator `json:"coordinator"`
}

type coordinator struct {
	NodeID int32  `json:"node_id"`
	Host   string `json:"host"`
	Port   int32  `json:"port"`
}

func stateRows() *tabular {
	return &tabular{columns: []string{"group", "coordinator", "type", "state", "protocol_type", "assignment_strategy", "generation", "members"}}
}

func addState(t *tabular, g *groupInfo) groupState {
	c := g.coordinator
	s := groupState{Type: g.groupType, State: g.state, ProtocolType: g.protocolType, AssignmentStrategy: g.strategy,
		Generation: g.generation, Members: len(g.members), Coordinator: coordinator{NodeID: c.NodeID, Host: c.Host, Port: c.Port}}
	gen := ""
	if s.Generation != nil {
		gen = itoa(*s.Generation)
	}
	t.add(g.name, fmt.Sprintf("%s:%d (id %d)", c.Host, c.Port, c.NodeID), s.Type, s.State, s.ProtocolType, s.AssignmentStrategy, gen, itoa(s.Members))
	return s
}
