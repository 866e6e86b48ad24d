package groupcoord

import (
	"crypto/rand"
	"fmt"
	"time"
)

// JoinRequest is a JoinGroup.
type JoinRequest struct {
	Group      string
	MemberID   string  // "" for a member joining for the first time
	InstanceID *string // group.instance.id (KIP-345), nil for a dynamic member
	ClientID   string
	ClientHost string
	// SessionTimeout is the member's session.timeout.ms; RebalanceTimeout
	// its max.poll.interval.ms (JoinGroup v0 has none: the session timeout).
	SessionTimeout   time.Duration
	RebalanceTimeout time.Duration
	ProtocolType     string
	Protocols        []Protocol
	Reason           string
	// RequireKnownMemberID (JoinGroup v4+, KIP-394): a new dynamic member
	// first gets its member id with ErrMemberIDRequired and joins with it.
	RequireKnownMemberID bool
	// SupportsSkipAssignment (JoinGroup v9+, KIP-814): a restarted static
	// leader is told it leads but must not assign.
	SupportsSkipAssignment bool
}

// JoinResult answers a JoinGroup.
type JoinResult struct {
	Err            error
	MemberID       string
	Generation     int32
	ProtocolType   string
	Protocol       string // "" when none
	LeaderID       string
	SkipAssignment bool
	Members        []JoinedMember // to the leader only
}

// JoinedMember is one member as the leader sees it: its metadata for the
// selected protocol.
type JoinedMember struct {
	MemberID   string
	InstanceID *string
	Metadata   []byte
}

// Join handles a JoinGroup. The result arrives when the rebalance the join
// takes part in completes (bounded by the group's rebalance timeout), or at
// once for errors and for joins that need no rebalance.
func (c *Coordinator) Join(req JoinRequest) <-chan JoinResult {
	out := make(chan JoinResult, 1)
	fail := func(err error) <-chan JoinResult {
		out <- JoinResult{Err: err, MemberID: req.MemberID, Generation: -1}
		return out
	}
	if err := c.checkGroupID(req.Group); err != nil {
		return fail(err)
	}
	if _, err := c.ownerOf(req.Group); err != nil {
		return fail(err)
	}
	s := c.settings()
	switch {
	case req.SessionTimeout < s.minSession || req.SessionTimeout > s.maxSession:
		return fail(ErrInvalidSessionTimeout)
	case req.ProtocolType == "" || len(req.Protocols) == 0:
		return fail(ErrInconsistentProtocol)
	}
	var g *group
	var err error
	if req.MemberID == "" {
		g, err = c.getOrCreate(req.Group)
	} else if g, err = c.lookup(req.Group); err == nil && g == nil {
		return fail(ErrUnknownMember)
	}
	if err != nil {
		return fail(err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.checkJoinLocked(req, s.maxSize); err != nil {
		return fail(err)
	}
	if req.MemberID == "" {
		g.joinNewLocked(req, out)
	} else {
		g.joinKnownLocked(req, out)
	}
	return out
}

// checkJoinLocked applies the checks every join passes: the group is
// alive, speaks the member's protocol type and one of its protocols, and
// has room for it.
func (g *group) checkJoinLocked(req JoinRequest, maxSize int) error {
	switch {
	case g.released:
		return ErrNotCoordinator
	case g.state == StateDead:
		return ErrCoordinatorNotAvailable
	case !g.supportsLocked(req):
		return ErrInconsistentProtocol
	case !g.hasRoomLocked(req, maxSize):
		if p, ok := g.pending[req.MemberID]; ok {
			p.timer.Stop()
			delete(g.pending, req.MemberID)
		}
		return ErrGroupMaxSize
	}
	return nil
}

// supportsLocked says whether the member's protocol type is the group's and
// at least one of its protocols is supported by every other member.
func (g *group) supportsLocked(req JoinRequest) bool {
	others := make([]*member, 0, len(g.members))
	for _, m := range g.members {
		replaced := req.InstanceID != nil && m.instance() == *req.InstanceID
		if m.id != req.MemberID && !replaced {
			others = append(others, m)
		}
	}
	if len(others) == 0 {
		return true
	}
	if req.ProtocolType != g.protocolType {
		return false
	}
	for _, p := range req.Protocols {
		all := true
		for _, m := range others {
			all = all && hasProtocol(m, p.Name)
		}
		if all {
			return true
		}
	}
	return false
}

func hasProtocol(m *member, name string) bool {
	for _, p := range m.protocols {
		if p.Name == name {
			return true
		}
	}
	return false
}

// hasRoomLocked says whether group.max.size admits the member: members
// already in the group (or replacing a static one) always fit.
func (g *group) hasRoomLocked(req JoinRequest, maxSize int) bool {
	if _, ok := g.members[req.MemberID]; ok {
		return true
	}
	if req.InstanceID != nil {
		if _, ok := g.static[*req.InstanceID]; ok {
			return true
		}
	}
	n := len(g.members) + len(g.pending)
	if _, ok := g.pending[req.MemberID]; ok {
		n--
	}
	return n < maxSize
}

// joinNewLocked handles a join without a member id.
func (g *group) joinNewLocked(req JoinRequest, out chan JoinResult) {
	prefix := req.ClientID
	if req.InstanceID != nil {
		prefix = *req.InstanceID
	}
	id := newMemberID(prefix)
	switch {
	case req.InstanceID != nil && g.static[*req.InstanceID] != "":
		g.replaceStaticLocked(g.static[*req.InstanceID], id, req, out)
	case req.InstanceID == nil && req.RequireKnownMemberID:
		g.addPendingLocked(id, req.SessionTimeout)
		out <- JoinResult{Err: ErrMemberIDRequired, MemberID: id, Generation: -1}
	default:
		g.addMemberLocked(id, req, out)
	}
}

// joinKnownLocked handles a join with a member id: a pending member
// completing KIP-394, or a member rejoining.
func (g *group) joinKnownLocked(req JoinRequest, out chan JoinResult) {
	if p, ok := g.pending[req.MemberID]; ok && req.InstanceID == nil {
		p.timer.Stop()
		delete(g.pending, req.MemberID)
		g.addMemberLocked(req.MemberID, req, out)
		return
	}
	m, err := g.memberForLocked(req.MemberID, req.InstanceID)
	if err != nil {
		out <- JoinResult{Err: err, MemberID: req.MemberID, Generation: -1}
		return
	}
	g.scheduleSessionLocked(m)
	switch g.state {
	case StatePreparingRebalance:
		g.updateMemberLocked(m, req, out)
		g.tryCompleteJoinLocked()
	case StateCompletingRebalance, StateStable:
		// A follower rejoining with unchanged protocols (it may have missed
		// the JoinGroup answer) gets the current generation again; the
		// leader, or changed protocols, start a rebalance.
		if m.sameProtocols(req.Protocols) && (g.state == StateCompletingRebalance || m.id != g.leader) {
			out <- g.generationResultLocked(m, m.id == g.leader)
			return
		}
		g.updateMemberLocked(m, req, out)
		g.prepareRebalanceLocked(fmt.Sprintf("member %s rejoined (%s)", m.id, orDefault(req.Reason, "leader or protocol change")))
	default:
		out <- JoinResult{Err: ErrUnknownMember, MemberID: req.MemberID, Generation: -1}
	}
}

// memberForLocked finds the member a request speaks for. With an instance
// id, the member holding it must be the one named (FENCED_INSTANCE_ID
// otherwise: a newer instance replaced it).
func (g *group) memberForLocked(memberID string, instanceID *string) (*member, error) {
	if instanceID != nil {
		holder, ok := g.static[*instanceID]
		if !ok {
			return nil, ErrUnknownMember
		}
		if holder != memberID {
			return nil, ErrFencedInstance
		}
	}
	m := g.members[memberID]
	if m == nil {
		return nil, ErrUnknownMember
	}
	return m, nil
}

// addMemberLocked adds a member whose JoinGroup waits on out, and starts or
// joins a rebalance.
func (g *group) addMemberLocked(id string, req JoinRequest, out chan JoinResult) {
	m := &member{id: id, instanceID: cloneStr(req.InstanceID), clientID: req.ClientID, clientHost: req.ClientHost,
		joinOrder: g.nextJoin, isNew: true, joinedAt: g.c.clock.Now()}
	g.nextJoin++
	g.members[id] = m
	if m.instanceID != nil {
		g.static[*m.instanceID] = id
	}
	if g.leader == "" {
		g.leader = id
	}
	if len(g.members) == 1 {
		g.protocolType = req.ProtocolType
	}
	if g.initialDelay {
		g.newMemberAdded = true
	}
	g.updateMemberLocked(m, req, out)
	g.scheduleSessionLocked(m)
	g.c.lg.Info("group member joined", "group", g.id, "member", id, "instance", m.instance(), "client_id", req.ClientID,
		"client_host", req.ClientHost, "session_timeout", req.SessionTimeout, "rebalance_timeout", req.RebalanceTimeout,
		"reason", orDefault(req.Reason, "new member"), "members", len(g.members))
	if g.state == StatePreparingRebalance {
		g.tryCompleteJoinLocked()
		return
	}
	g.prepareRebalanceLocked(fmt.Sprintf("new member %s joined", id))
}

// updateMemberLocked takes a rejoining member's protocols and timeouts and
// parks its JoinGroup on out. A JoinGroup of the same member still waiting
// (a client that retried on a new connection) is answered with
// REBALANCE_IN_PROGRESS so that no request waits forever.
func (g *group) updateMemberLocked(m *member, req JoinRequest, out chan JoinResult) {
	m.protocols = cloneProtocols(req.Protocols)
	m.sessionTimeout, m.rebalanceTimeout = req.SessionTimeout, req.RebalanceTimeout
	g.answerJoinLocked(m, JoinResult{Err: ErrRebalanceInProgress, MemberID: m.id, Generation: -1})
	m.joinWait = out
	m.skipAssignmentOK = req.SupportsSkipAssignment
}

// generationResultLocked is the answer describing the current generation
// to m, with every member's metadata when withMembers (for the leader).
func (g *group) generationResultLocked(m *member, withMembers bool) JoinResult {
	res := JoinResult{MemberID: m.id, Generation: g.generation, ProtocolType: g.protocolType, Protocol: g.protocol, LeaderID: g.leader}
	if withMembers {
		res.Members = g.joinedMembersLocked()
	}
	return res
}

// joinedMembersLocked lists every member with its metadata for the
// selected protocol, in join order.
func (g *group) joinedMembersLocked() []JoinedMember {
	var out []JoinedMember
	for _, m := range g.sortedMembersLocked() {
		out = append(out, JoinedMember{MemberID: m.id, InstanceID: cloneStr(m.instanceID), Metadata: m.metadataFor(g.protocol)})
	}
	return out
}

// answerJoinLocked answers m's waiting JoinGroup, if any.
func (g *group) answerJoinLocked(m *member, res JoinResult) {
	if m.joinWait == nil {
		return
	}
	select {
	case m.joinWait <- res:
	default: // answered already; never happens with one answer per channel
	}
	m.joinWait = nil
}

// newMemberID returns prefix-<uuid>, as Kafka forms member ids.
func newMemberID(prefix string) string {
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		panic(fmt.Sprintf("groupcoord: crypto/rand: %v", err))
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%s-%x-%x-%x-%x-%x", prefix, u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

func cloneProtocols(ps []Protocol) []Protocol {
	out := make([]Protocol, len(ps))
	for i, p := range ps {
		out[i] = Protocol{Name: p.Name, Metadata: append([]byte(nil), p.Metadata...)}
	}
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
