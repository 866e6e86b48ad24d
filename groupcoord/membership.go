package groupcoord

import (
	"fmt"
	"time"
)

// removal says why a member left its group, for the log and the metric.
type removal struct {
	metric string
	why    string
}

var (
	removalLeave            = removal{"leave", "LeaveGroup"}
	removalSession          = removal{"session_timeout", "session timeout expired (session.timeout.ms)"}
	removalRebalanceTimeout = removal{"rebalance_timeout", "did not rejoin within the rebalance timeout (max.poll.interval.ms)"}
	removalSyncTimeout      = removal{"sync_timeout", "did not send SyncGroup within the rebalance timeout"}
	removalNewMemberTimeout = removal{"new_member_timeout", "new member never completed its join"}
)

// removeMemberLocked takes m out of the group, answering its waiting
// requests with UNKNOWN_MEMBER_ID. The caller decides whether the group
// rebalances (memberLeftLocked).
func (g *group) removeMemberLocked(m *member, r removal) {
	g.answerJoinLocked(m, JoinResult{Err: ErrUnknownMember, MemberID: m.id, Generation: -1})
	g.answerSyncLocked(m, SyncResult{Err: ErrUnknownMember})
	m.sessionSeq++
	if m.sessionTimer != nil {
		m.sessionTimer.Stop()
	}
	delete(g.members, m.id)
	if m.instanceID != nil && g.static[*m.instanceID] == m.id {
		delete(g.static, *m.instanceID)
	}
	delete(g.pendingSync, m.id)
	if g.leader == m.id {
		g.leader = ""
		g.electLeaderLocked(func(*member) bool { return true })
	}
	g.c.m.removals.WithLabelValues(r.metric).Inc()
	g.c.lg.Info("group member removed", "group", g.id, "member", m.id, "instance", m.instance(), "client_id", m.clientID,
		"client_host", m.clientHost, "generation", g.generation, "reason", r.why, "members_left", len(g.members))
}

// memberLeftLocked reacts to members leaving: a settled group rebalances,
// a rebalancing one may now have everyone it waits for.
func (g *group) memberLeftLocked(reason string) {
	switch g.state {
	case StateStable, StateCompletingRebalance:
		g.prepareRebalanceLocked(reason)
	case StatePreparingRebalance:
		g.tryCompleteJoinLocked()
	}
}

// scheduleSessionLocked (re)starts m's session timeout: a heartbeat, a
// join, a sync or a commit shows the member is alive.
func (g *group) scheduleSessionLocked(m *member) {
	g.scheduleSessionAfterLocked(m, m.sessionTimeout)
}

func (g *group) scheduleSessionAfterLocked(m *member, d time.Duration) {
	m.sessionSeq++
	if m.sessionTimer != nil {
		m.sessionTimer.Stop()
	}
	seq := m.sessionSeq
	m.sessionTimer = g.c.clock.AfterFunc(d, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.released || g.c.closed.Load() || g.members[m.id] != m || m.sessionSeq != seq {
			return
		}
		g.onSessionExpiredLocked(m)
	})
}

// onSessionExpiredLocked removes a member whose session expired, except
// while it waits in JoinGroup or SyncGroup: a waiting member cannot
// heartbeat, and the rebalance timeout bounds the wait instead (a new
// member's first join, newMemberJoinTimeout).
func (g *group) onSessionExpiredLocked(m *member) {
	if m.joinWait != nil || m.syncWait != nil {
		d := m.sessionTimeout
		if m.joinWait != nil && m.isNew {
			left := newMemberJoinTimeout - g.c.clock.Now().Sub(m.joinedAt)
			if left <= 0 {
				g.removeMemberLocked(m, removalNewMemberTimeout)
				g.memberLeftLocked(fmt.Sprintf("new member %s never completed its join", m.id))
				return
			}
			d = min(d, left)
		}
		g.scheduleSessionAfterLocked(m, d)
		return
	}
	g.removeMemberLocked(m, removalSession)
	g.memberLeftLocked(fmt.Sprintf("member %s's session expired", m.id))
}

// addPendingLocked remembers a member id handed out with MEMBER_ID_REQUIRED
// until the member joins with it or its session timeout passes.
func (g *group) addPendingLocked(id string, session time.Duration) {
	p := &pendingMember{}
	p.timer = g.c.clock.AfterFunc(session, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.released || g.c.closed.Load() || g.pending[id] != p {
			return
		}
		delete(g.pending, id)
		g.c.lg.Info("group pending member expired", "group", g.id, "member", id,
			"reason", "did not join with its KIP-394 member id within the session timeout")
		g.tryCompleteJoinLocked()
	})
	g.pending[id] = p
}

// replaceStaticLocked gives a restarted static member (same instance id, no
// member id) the place of its previous incarnation, which is fenced: its
// waiting requests get FENCED_INSTANCE_ID, and so will all it sends. In a
// stable group whose protocol does not change, the new member takes the
// old assignment with no rebalance (KIP-345).
func (g *group) replaceStaticLocked(oldID, newID string, req JoinRequest, out chan JoinResult) {
	m := g.members[oldID]
	prevLeader := g.leader
	g.answerJoinLocked(m, JoinResult{Err: ErrFencedInstance, MemberID: oldID, Generation: -1})
	g.answerSyncLocked(m, SyncResult{Err: ErrFencedInstance})
	delete(g.members, oldID)
	m.id = newID
	g.members[newID] = m
	g.static[*m.instanceID] = newID
	if g.leader == oldID {
		g.leader = newID
	}
	if g.pendingSync[oldID] {
		delete(g.pendingSync, oldID)
		g.pendingSync[newID] = true
	}
	g.updateMemberLocked(m, req, out)
	g.scheduleSessionLocked(m)
	g.c.lg.Info("group member joined", "group", g.id, "member", newID, "instance", m.instance(), "client_id", req.ClientID,
		"client_host", req.ClientHost, "reason", "static member rejoined, replacing "+oldID, "members", len(g.members))
	switch g.state {
	case StateStable:
		if g.selectProtocolLocked() == g.protocol {
			g.resumeStaticLocked(m, prevLeader)
			return
		}
		g.prepareRebalanceLocked(fmt.Sprintf("static member %s rejoined with protocols that change the group's", newID))
	case StateCompletingRebalance:
		// The leader may be assigning to the old member id: start over.
		g.prepareRebalanceLocked(fmt.Sprintf("static member %s replaced during CompletingRebalance", newID))
	case StatePreparingRebalance:
		g.tryCompleteJoinLocked()
	}
}

// resumeStaticLocked answers a replaced static member of a stable group
// once its new member id is durable: the current generation, with the
// leader it had. Before JoinGroup v9 the old leader id is given even when
// the member was the leader, so that it does not reassign; from v9 it is
// told it leads and to skip the assignment (KIP-814).
func (g *group) resumeStaticLocked(m *member, prevLeader string) {
	out := m.joinWait
	m.joinWait = nil
	res := g.generationResultLocked(m, false)
	res.LeaderID = prevLeader
	if m.skipAssignmentOK {
		res.LeaderID = g.leader
		if g.leader == m.id {
			res.SkipAssignment, res.Members = true, g.joinedMembersLocked()
		}
	}
	rec := g.recordLocked()
	g.persisted = true
	err := g.enqueueLocked(writeRecord(g.id, &rec), func(err error) {
		if err != nil {
			res = JoinResult{Err: err, MemberID: res.MemberID, Generation: -1}
		}
		out <- res
	})
	if err != nil {
		out <- JoinResult{Err: err, MemberID: res.MemberID, Generation: -1}
	}
}

// persistRecordLocked queues the group's record without waiting: used
// when the group becomes empty, where a lost write only brings back a
// generation whose members will time out.
func (g *group) persistRecordLocked() {
	rec := g.recordLocked()
	g.persisted = true
	err := g.enqueueLocked(writeRecord(g.id, &rec), func(err error) {
		if err != nil {
			g.c.lg.Warn("group record not stored", "group", g.id, "err", err)
		}
	})
	if err != nil {
		g.c.lg.Warn("group record not stored", "group", g.id, "err", err)
	}
}
