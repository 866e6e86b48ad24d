package admin

import (
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// groupStates are the states a group can be listed by (KIP-518, and the
// KIP-848 ones), spelled as Kafka spells them.
var groupStates = []string{"Empty", "Stable", "PreparingRebalance", "CompletingRebalance", "Dead", "Assigning", "Reconciling"}

func init() {
	register("groups", &commandSpec{
		name:     "groups list",
		synopsis: "groups list [--state S ...] [--output table|json|csv]",
		about: `Lists the consumer groups of the cluster, sorted by name, with their type
(classic, or consumer for KIP-848 groups), state and protocol type. --state (repeatable, any case) keeps the groups in one of
the states given: ` + strings.Join(groupStates, ", ") + ".",
		examples: "  broker groups list\n  broker groups list --state Empty --output csv",
		read:     true,
		setup:    setupGroupsList,
	})
}

func setupGroupsList(fs *flagSet) action {
	var states stringList
	fs.Var(&states, "state", "keep only groups in `STATE` (repeatable)")
	return func(inv *invocation) error {
		filter, err := canonicalStates(states)
		if err != nil {
			return err
		}
		listed, err := inv.listGroups(filter)
		if err != nil {
			return err
		}
		rows := &tabular{columns: []string{"group", "type", "state", "protocol_type"}}
		type groupJSON struct {
			Group        string `json:"group"`
			Type         string `json:"type"`
			State        string `json:"state"`
			ProtocolType string `json:"protocol_type"`
		}
		list := []groupJSON{}
		for _, g := range listed.Sorted() {
			rows.add(g.Group, g.GroupType, g.State, g.ProtocolType)
			list = append(list, groupJSON{g.Group, g.GroupType, g.State, g.ProtocolType})
		}
		return inv.emit(view{rows: rows, json: list})
	}
}

// canonicalStates checks --state values and spells them as Kafka does.
func canonicalStates(states []string) ([]string, error) {
	var out []string
	for _, s := range states {
		i := indexFold(groupStates, s)
		if i < 0 {
			return nil, usagef("--state %q: want one of %s", s, strings.Join(groupStates, ", "))
		}
		out = append(out, groupStates[i])
	}
	return out, nil
}

func indexFold(list []string, s string) int {
	for i, v := range list {
		if strings.EqualFold(v, s) {
			return i
		}
	}
	return -1
}

// listGroups lists the groups in one of states (all groups without
// states). The filter is also applied here, for brokers older than
// KIP-518 that ignore it.
func (inv *invocation) listGroups(states []string) (kadm.ListedGroups, error) {
	adm, err := inv.admin()
	if err != nil {
		return nil, err
	}
	listed, err := adm.ListGroups(inv.ctx, states...)
	if err != nil {
		return nil, inv.failed("list groups", err)
	}
	for name, g := range listed {
		if len(states) > 0 && indexFold(states, g.State) < 0 {
			delete(listed, name)
		}
	}
	return listed, nil
}

// groupError explains the group errors an operator can act on.
func groupError(group string, err error, msg string) error {
	switch {
	case errors.Is(err, kerr.GroupIDNotFound):
		return fmt.Errorf("group %s: no such group", group)
	case errors.Is(err, kerr.NonEmptyGroup):
		return fmt.Errorf("group %s has active members; stop its consumers first: %w", group, err)
	}
	return fmt.Errorf("group %s: %w", group, withMessage(err, msg))
}
