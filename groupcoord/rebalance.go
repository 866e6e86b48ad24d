package groupcoord

import (
	"sort"
	"time"
)

// prepareRebalanceLocked starts a rebalance: every member must rejoin
// within the rebalance timeout. The first rebalance of an empty group
// waits group.initial.rebalance.delay.ms first, so that members starting
// together land in one generation.
func (g *group) prepareRebalanceLocked(reason string) {
	if g.state == StateCompletingRebalance {
		g.resetSyncLocked(ErrRebalanceInProgress)
	}
	clear(g.pendingSync)
	initial := g.state == StateEmpty
	g.setStateLocked(StatePreparingRebalance)
	g.rebalanceStart = g.c.clock.Now()
	g.c.m.rebalances.Inc()
	g.c.lg.Info("group rebalancing", "group", g.id, "generation", g.generation, "members", len(g.members), "reason", reason)
	if initial {
		delay := g.c.settings().initialDelay
		g.initialDelay, g.newMemberAdded = true, false
		g.initialLeft = max(g.rebalanceTimeoutLocked()-delay, 0)
		g.armRebalanceTimerLocked(delay, g.onInitialDelayLocked)
		return
	}
	g.armRebalanceTimerLocked(g.rebalanceTimeoutLocked(), g.completeJoinLocked)
	g.tryCompleteJoinLocked()
}

// onInitialDelayLocked ends one initial delay: another one follows while
// new members keep arriving, up to the rebalance timeout.
func (g *group) onInitialDelayLocked() {
	if g.newMemberAdded && g.initialLeft > 0 {
		d := min(g.c.settings().initialDelay, g.initialLeft)
		g.initialLeft -= d
		g.newMemberAdded = false
		g.armRebalanceTimerLocked(d, g.onInitialDelayLocked)
		return
	}
	g.initialDelay = false
	g.completeJoinLocked()
}

// tryCompleteJoinLocked completes the join phase once every member (and
// every member id handed out by KIP-394) has joined.
func (g *group) tryCompleteJoinLocked() {
	if g.state != StatePreparingRebalance || g.initialDelay || len(g.pending) > 0 {
		return
	}
	for _, m := range g.members {
		if m.joinWait == nil {
			return
		}
	}
	g.completeJoinLocked()
}

// completeJoinLocked ends the join phase (everyone joined, or the
// rebalance timeout passed): dynamic members that did not rejoin are
// removed, static ones stay in the generation (KIP-345: they may be
// restarting), and every joined member learns the new generation; the
// leader gets the members to assign.
func (g *group) completeJoinLocked() {
	g.stopRebalanceTimerLocked()
	g.initialDelay = false
	for _, m := range g.sortedMembersLocked() {
		if m.joinWait == nil && !m.isStatic() {
			g.removeMemberLocked(m, removalRebalanceTimeout)
		}
	}
	if len(g.members) > 0 && !g.joinedLeaderLocked() {
		// Only static members that did not rejoin are left: wait for
		// their sessions to expire, or for them to come back.
		g.c.lg.Warn("group rebalance postponed: no member rejoined", "group", g.id, "members", len(g.members))
		g.armRebalanceTimerLocked(g.rebalanceTimeoutLocked(), g.completeJoinLocked)
		return
	}
	g.generation++
	if len(g.members) == 0 {
		g.protocol, g.leader = "", ""
		g.setStateLocked(StateEmpty)
		g.c.lg.Info("group is empty", "group", g.id, "generation", g.generation)
		g.persistRecordLocked()
		return
	}
	g.protocol = g.selectProtocolLocked()
	g.setStateLocked(StateCompletingRebalance)
	g.c.lg.Info("group joined", "group", g.id, "generation", g.generation, "members", len(g.members),
		"leader", g.leader, "protocol", g.protocol, "took", g.c.clock.Now().Sub(g.rebalanceStart).Round(time.Millisecond))
	for _, m := range g.members {
		if m.joinWait != nil {
			g.answerJoinLocked(m, g.generationResultLocked(m, m.id == g.leader))
			g.pendingSync[m.id] = true
		}
		m.isNew = false
		g.scheduleSessionLocked(m)
	}
	g.armRebalanceTimerLocked(g.rebalanceTimeoutLocked(), g.onSyncDeadlineLocked)
}

// joinedLeaderLocked keeps the leader if it rejoined, or else makes the
// earliest member that did the leader; false when no member rejoined.
func (g *group) joinedLeaderLocked() bool {
	if l := g.leaderMemberLocked(); l != nil && l.joinWait != nil {
		return true
	}
	return g.electLeaderLocked(func(m *member) bool { return m.joinWait != nil })
}

// onSyncDeadlineLocked removes the members of the generation that did not
// send SyncGroup within the rebalance timeout, and rebalances without them.
func (g *group) onSyncDeadlineLocked() {
	if len(g.pendingSync) == 0 || (g.state != StateCompletingRebalance && g.state != StateStable) {
		return
	}
	ids := make([]string, 0, len(g.pendingSync))
	for id := range g.pendingSync {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if m := g.members[id]; m != nil {
			g.removeMemberLocked(m, removalSyncTimeout)
		}
	}
	clear(g.pendingSync)
	g.prepareRebalanceLocked("members did not send SyncGroup within the rebalance timeout")
}

// resetSyncLocked answers every waiting SyncGroup with err and forgets the
// assignment being stored: the generation will not become stable.
func (g *group) resetSyncLocked(err error) {
	for _, m := range g.members {
		g.answerSyncLocked(m, SyncResult{Err: err})
		m.assignment = nil
	}
	g.storing = false
}

// selectProtocolLocked picks the generation's protocol: among those every
// member supports, the one most members prefer (each votes for its first
// supported one); ties go to the earliest member's preference.
func (g *group) selectProtocolLocked() string {
	members := g.sortedMembersLocked()
	if len(members) == 0 {
		return ""
	}
	candidate := func(name string) bool {
		for _, m := range members {
			if !hasProtocol(m, name) {
				return false
			}
		}
		return true
	}
	votes := map[string]int{}
	for _, m := range members {
		for _, p := range m.protocols {
			if candidate(p.Name) {
				votes[p.Name]++
				break
			}
		}
	}
	best := ""
	for _, p := range members[0].protocols {
		if votes[p.Name] > votes[best] {
			best = p.Name
		}
	}
	return best
}
