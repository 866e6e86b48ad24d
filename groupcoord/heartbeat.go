package groupcoord

import (
	"fmt"
	"strings"
)

// HeartbeatRequest is a Heartbeat.
type HeartbeatRequest struct {
	Group      string
	MemberID   string
	InstanceID *string
	Generation int32
}

// Heartbeat keeps a member's session alive. During a rebalance it answers
// ErrRebalanceInProgress, which is how members learn they must rejoin.
func (c *Coordinator) Heartbeat(req HeartbeatRequest) error {
	if err := c.checkGroupID(req.Group); err != nil {
		return err
	}
	g, err := c.lookup(req.Group)
	if err != nil {
		return err
	}
	if g == nil {
		return ErrUnknownMember
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.released {
		return ErrNotCoordinator
	}
	if g.state == StateDead {
		return ErrCoordinatorNotAvailable
	}
	m, err := g.memberForLocked(req.MemberID, req.InstanceID)
	if err != nil {
		return err
	}
	if req.Generation != g.generation {
		return ErrIllegalGeneration
	}
	g.scheduleSessionLocked(m)
	if g.state == StatePreparingRebalance {
		return ErrRebalanceInProgress
	}
	return nil
}

// LeaveMember is one member of a LeaveGroup (v3+ batches them).
type LeaveMember struct {
	MemberID string
	// InstanceID names a static member; MemberID may then be "" (the
	// admin client removing members by instance id).
	InstanceID *string
	Reason     string
}

// Leave removes members from a group at once and rebalances the rest. It
// returns one error per member and a group-level error.
func (c *Coordinator) Leave(group string, members []LeaveMember) ([]error, error) {
	if err := c.checkGroupID(group); err != nil {
		return nil, err
	}
	errs := make([]error, len(members))
	g, err := c.lookup(group)
	if err != nil {
		return nil, err
	}
	if g == nil {
		for i := range errs {
			errs[i] = ErrUnknownMember
		}
		return errs, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.released {
		return nil, ErrNotCoordinator
	}
	if g.state == StateDead {
		return nil, ErrCoordinatorNotAvailable
	}
	var left []string
	for i, lm := range members {
		id, err := g.leaveOneLocked(lm)
		if errs[i] = err; err == nil {
			left = append(left, id)
		}
	}
	if len(left) > 0 {
		g.memberLeftLocked(fmt.Sprintf("members left the group: %s", strings.Join(left, ", ")))
	}
	return errs, nil
}

// leaveOneLocked removes one member (or a pending member id) and returns
// its member id.
func (g *group) leaveOneLocked(lm LeaveMember) (string, error) {
	id := lm.MemberID
	if lm.InstanceID != nil {
		holder, ok := g.static[*lm.InstanceID]
		if !ok {
			return "", ErrUnknownMember
		}
		if id != "" && id != holder {
			return "", ErrFencedInstance
		}
		id = holder
	} else if p, ok := g.pending[id]; ok {
		p.timer.Stop()
		delete(g.pending, id)
		g.c.lg.Info("group pending member left", "group", g.id, "member", id, "reason", orDefault(lm.Reason, "LeaveGroup"))
		return id, nil
	}
	m := g.members[id]
	if m == nil {
		return "", ErrUnknownMember
	}
	r := removalLeave
	if lm.Reason != "" {
		r.why = "LeaveGroup: " + lm.Reason
	}
	g.removeMemberLocked(m, r)
	return id, nil
}
