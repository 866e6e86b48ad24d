package groupcoord

import (
	"sort"
	"sync"
	"time"

	"github.com/sediment-io/sediment/metadata"
)

// group is one consumer group: its membership, its generation and its
// committed offsets. All of it is owned by mu.
type group struct {
	c   *Coordinator
	own *shardOwner // the shard ownership it was created or loaded under
	id  string

	mu           sync.Mutex // guards every field below
	state        State
	stateSince   time.Time
	generation   int32
	protocolType string
	protocol     string // selected protocol of the current generation, "" when none
	leader       string
	members      map[string]*member
	static       map[string]string // group.instance.id -> member id
	pending      map[string]*pendingMember
	nextJoin     uint64 // join order of the next new member

	// The rebalance timer runs the initial delay, the join deadline and
	// then the SyncGroup deadline; rebalanceSeq invalidates fired ones.
	rebalanceTimer Timer
	rebalanceSeq   uint64
	initialDelay   bool          // the join is in group.initial.rebalance.delay.ms
	initialLeft    time.Duration // of the rebalance timeout, after the delays so far
	newMemberAdded bool          // a member joined during the current initial delay
	rebalanceStart time.Time
	pendingSync    map[string]bool // members of the generation that owe a SyncGroup
	storing        bool            // the leader's assignment is being made durable

	offsets map[metadata.GroupPartition]*offsetState
	// txnOffsets are the offsets committed inside open transactions, by
	// producer id, as durable: pending until CompleteTxn.
	txnOffsets map[int64]map[metadata.GroupPartition]*pendingOffset
	// txnFences: the epoch of each producer's last transaction completed
	// here (in memory only).
	txnFences map[int64]txnFence
	persisted bool // its record exists in metadata (or a write of it is queued)
	inflight  int  // offset writes queued and not yet applied
	// txnInflight counts those of them that write pending offsets, by
	// producer id.
	txnInflight map[int64]int
	// stableWaiters run once no offset write is in flight (OffsetFetch
	// with require_stable, CompleteTxn).
	stableWaiters []func()
	// released: its shard was released or dropped (or the coordinator
	// closed); it answers ErrNotCoordinator and runs no timer.
	released bool
}

func newGroup(c *Coordinator, own *shardOwner, id string) *group {
	return &group{
		c: c, own: own, id: id, state: StateEmpty, stateSince: c.clock.Now(),
		members: map[string]*member{}, static: map[string]string{}, pending: map[string]*pendingMember{},
		pendingSync: map[string]bool{}, offsets: map[metadata.GroupPartition]*offsetState{},
	}
}

// setStateLocked moves the group to s.
func (g *group) setStateLocked(s State) {
	if g.state == s {
		return
	}
	g.state = s
	g.stateSince = g.c.clock.Now()
}

// leaderMemberLocked returns the leader, nil when there is none.
func (g *group) leaderMemberLocked() *member { return g.members[g.leader] }

// electLeaderLocked makes the earliest-joined member for which ok holds the
// leader, and reports whether there was one.
func (g *group) electLeaderLocked(ok func(*member) bool) bool {
	var best *member
	for _, m := range g.members {
		if ok(m) && (best == nil || m.joinOrder < best.joinOrder) {
			best = m
		}
	}
	if best == nil {
		return false
	}
	g.leader = best.id
	return true
}

// sortedMembersLocked returns the members in join order.
func (g *group) sortedMembersLocked() []*member {
	out := make([]*member, 0, len(g.members))
	for _, m := range g.members {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].joinOrder < out[j].joinOrder })
	return out
}

// rebalanceTimeoutLocked is the longest rebalance timeout of the members:
// how long a rebalance waits for them to rejoin.
func (g *group) rebalanceTimeoutLocked() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		d = max(d, m.rebalanceTimeout)
	}
	return d
}

// stopRebalanceTimerLocked cancels the rebalance timer, including a call
// of it that already fired and waits for the lock.
func (g *group) stopRebalanceTimerLocked() {
	g.rebalanceSeq++
	if g.rebalanceTimer != nil {
		g.rebalanceTimer.Stop()
		g.rebalanceTimer = nil
	}
}

// armRebalanceTimerLocked runs fn (with the lock held) after d, unless the
// timer is stopped or re-armed first.
func (g *group) armRebalanceTimerLocked(d time.Duration, fn func()) {
	g.stopRebalanceTimerLocked()
	seq := g.rebalanceSeq
	g.rebalanceTimer = g.c.clock.AfterFunc(d, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if seq != g.rebalanceSeq || g.released || g.c.closed.Load() {
			return
		}
		g.rebalanceTimer = nil
		fn()
	})
}

// recordLocked is the group's durable form.
func (g *group) recordLocked() metadata.GroupRecord {
	rec := metadata.GroupRecord{ProtocolType: g.protocolType, Protocol: g.protocol, Generation: g.generation,
		Leader: g.leader, StateMs: g.stateSince.UnixMilli()}
	for _, m := range g.sortedMembersLocked() {
		mr := metadata.GroupMemberRecord{MemberID: m.id, InstanceID: cloneStr(m.instanceID), ClientID: m.clientID,
			ClientHost: m.clientHost, SessionTimeoutMs: int32(m.sessionTimeout.Milliseconds()),
			RebalanceTimeoutMs: int32(m.rebalanceTimeout.Milliseconds()), Assignment: m.assignment}
		for _, p := range m.protocols {
			mr.Protocols = append(mr.Protocols, metadata.GroupProtocol{Name: p.Name, Metadata: p.Metadata})
		}
		rec.Members = append(rec.Members, mr)
	}
	return rec
}

// loadGroup rebuilds a group from its stored form: Stable when the stored
// generation has members (they resume with their assignments, each with a
// fresh session timeout), Empty otherwise.
func loadGroup(c *Coordinator, own *shardOwner, sg metadata.StoredGroup) *group {
	g := newGroup(c, own, sg.ID)
	rec := sg.Record
	g.protocolType, g.protocol, g.generation, g.leader = rec.ProtocolType, rec.Protocol, rec.Generation, rec.Leader
	g.stateSince = time.UnixMilli(rec.StateMs)
	g.persisted = true
	for _, mr := range rec.Members {
		m := &member{id: mr.MemberID, instanceID: cloneStr(mr.InstanceID), clientID: mr.ClientID, clientHost: mr.ClientHost,
			sessionTimeout:   time.Duration(mr.SessionTimeoutMs) * time.Millisecond,
			rebalanceTimeout: time.Duration(mr.RebalanceTimeoutMs) * time.Millisecond,
			assignment:       mr.Assignment, joinOrder: g.nextJoin}
		g.nextJoin++
		for _, p := range mr.Protocols {
			m.protocols = append(m.protocols, Protocol{Name: p.Name, Metadata: p.Metadata})
		}
		g.members[m.id] = m
		if m.instanceID != nil {
			g.static[*m.instanceID] = m.id
		}
	}
	if len(g.members) > 0 {
		g.state = StateStable
		for _, m := range g.members {
			g.scheduleSessionLocked(m)
		}
	}
	for tp, o := range sg.Offsets {
		g.offsets[tp] = &offsetState{o}
	}
	for pid, byTP := range sg.TxnOffsets {
		for tp, o := range byTP {
			g.applyTxnOffsetsLocked(metadata.GroupWrite{TxnOffsets: []metadata.TxnOffsetWrite{
				{ProducerID: pid, GroupPartition: tp, Offset: &o}}})
		}
	}
	return g
}

// shutdownLocked stops the group's timers and answers every waiting
// request: the coordinator is closing, or no longer owns the group's shard.
func (g *group) shutdownLocked() {
	g.released = true
	g.stopRebalanceTimerLocked()
	for id, p := range g.pending {
		p.timer.Stop()
		delete(g.pending, id)
	}
	for _, m := range g.members {
		m.sessionSeq++
		if m.sessionTimer != nil {
			m.sessionTimer.Stop()
		}
		g.answerJoinLocked(m, JoinResult{Err: ErrNotCoordinator, MemberID: m.id, Generation: -1})
		g.answerSyncLocked(m, SyncResult{Err: ErrNotCoordinator})
	}
}
