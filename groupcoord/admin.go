package groupcoord

import (
	"strings"
	"sync"
)

// GroupListing is one group in ListGroups.
type GroupListing struct {
	Group        string
	ProtocolType string
	State        State
}

// List returns the groups, sorted by id; states, when not empty, keeps only
// groups in one of them (matched case-insensitively, KIP-518). Groups being
// deleted are not listed.
func (c *Coordinator) List(states []string) []GroupListing {
	var out []GroupListing
	for _, g := range c.allGroups() {
		g.mu.Lock()
		l := GroupListing{Group: g.id, ProtocolType: g.protocolType, State: g.state}
		g.mu.Unlock()
		if l.State != StateDead && matchesState(l.State, states) {
			out = append(out, l)
		}
	}
	return out
}

func matchesState(s State, states []string) bool {
	if len(states) == 0 {
		return true
	}
	for _, want := range states {
		if strings.EqualFold(want, s.String()) {
			return true
		}
	}
	return false
}

// GroupDescription is one group in DescribeGroups. A group that does not
// exist is described as Dead with ErrGroupNotFound.
type GroupDescription struct {
	Group        string
	Err          error
	State        State
	ProtocolType string
	Protocol     string
	Members      []MemberDescription
}

// MemberDescription is one member of a described group. Metadata and
// Assignment are given for a stable group only, as Kafka does.
type MemberDescription struct {
	MemberID   string
	InstanceID *string
	ClientID   string
	ClientHost string
	Metadata   []byte
	Assignment []byte
}

// Describe describes one group.
func (c *Coordinator) Describe(id string) GroupDescription {
	if err := c.checkGroupID(id); err != nil {
		return GroupDescription{Group: id, Err: err, State: StateDead}
	}
	g, err := c.lookup(id)
	if err != nil {
		return GroupDescription{Group: id, Err: err, State: StateDead}
	}
	if g == nil {
		return GroupDescription{Group: id, Err: ErrGroupNotFound, State: StateDead}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.released {
		return GroupDescription{Group: id, Err: ErrNotCoordinator, State: StateDead}
	}
	if g.state == StateDead {
		return GroupDescription{Group: id, Err: ErrGroupNotFound, State: StateDead}
	}
	d := GroupDescription{Group: id, State: g.state, ProtocolType: g.protocolType}
	stable := g.state == StateStable
	if stable {
		d.Protocol = g.protocol
	}
	for _, m := range g.sortedMembersLocked() {
		md := MemberDescription{MemberID: m.id, InstanceID: cloneStr(m.instanceID), ClientID: m.clientID, ClientHost: m.clientHost}
		if stable {
			md.Metadata, md.Assignment = m.metadataFor(g.protocol), m.assignment
		}
		d.Members = append(d.Members, md)
	}
	return d
}

// DeleteGroups deletes empty groups with their offsets, durably; the result
// holds one error per id (ErrGroupNotFound, ErrNonEmptyGroup, ...). A group
// with offsets pending in an open transaction is not empty.
func (c *Coordinator) DeleteGroups(ids []string) <-chan []error {
	out := make(chan []error, 1)
	errs := make([]error, len(ids))
	var mu sync.Mutex // guards left
	left := len(ids) + 1
	finish := func() {
		mu.Lock()
		defer mu.Unlock()
		if left--; left == 0 {
			out <- errs
		}
	}
	for i, id := range ids {
		c.deleteGroup(id, func(err error) {
			errs[i] = err
			finish()
		})
	}
	finish()
	return out
}

// deleteGroup deletes one group and calls done once that is durable (or
// failed).
func (c *Coordinator) deleteGroup(id string, done func(error)) {
	if err := c.checkGroupID(id); err != nil {
		done(err)
		return
	}
	g, err := c.lookup(id)
	if err != nil {
		done(err)
		return
	}
	if g == nil {
		done(ErrGroupNotFound)
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.released:
		done(ErrNotCoordinator)
	case g.state == StateDead:
		done(ErrGroupNotFound)
	case g.state != StateEmpty || len(g.members) > 0 || len(g.pending) > 0:
		done(ErrNonEmptyGroup)
	case g.hasTxnOffsetsLocked() || len(g.txnInflight) > 0:
		// Offsets pending in an open transaction would be lost with the
		// group; its commit would then materialise them into no group.
		done(ErrNonEmptyGroup)
	default:
		g.deleteLocked("DeleteGroups", done)
	}
}

// deleteLocked marks an empty group dead, deletes it and its offsets, and
// forgets it once that is durable. done (which may be nil) runs after.
func (g *group) deleteLocked(reason string, done func(error)) {
	g.setStateLocked(StateDead)
	g.c.lg.Info("group deleted", "group", g.id, "offsets", len(g.offsets), "reason", reason)
	finish := func(err error) {
		if err != nil {
			g.setStateLocked(StateEmpty) // still there; a later attempt may succeed
			// The deletion may have applied (an unknown outcome): the next
			// change stores the record again, conditional on the version
			// the persister read back.
			g.persisted = false
		} else {
			g.c.forget(g)
		}
		if done != nil {
			done(err)
		}
	}
	if !g.persisted {
		finish(nil)
		return
	}
	err := g.enqueueLocked(deleteGroupWrite(g.id), func(err error) {
		g.mu.Lock()
		defer g.mu.Unlock()
		finish(err)
	})
	if err != nil {
		finish(err)
	}
}
