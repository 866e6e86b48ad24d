package groupcoord

// SyncRequest is a SyncGroup.
type SyncRequest struct {
	Group      string
	MemberID   string
	InstanceID *string
	Generation int32
	// ProtocolType and Protocol (SyncGroup v5+) must match the group's
	// when given.
	ProtocolType *string
	Protocol     *string
	// Assignments is the leader's assignment, by member id.
	Assignments map[string][]byte
}

// SyncResult answers a SyncGroup.
type SyncResult struct {
	Err          error
	ProtocolType string
	Protocol     string
	Assignment   []byte
}

// Sync handles a SyncGroup. In CompletingRebalance the result arrives once
// the leader's assignment is durable; in Stable at once.
func (c *Coordinator) Sync(req SyncRequest) <-chan SyncResult {
	out := make(chan SyncResult, 1)
	if err := c.checkGroupID(req.Group); err != nil {
		out <- SyncResult{Err: err}
		return out
	}
	g, err := c.lookup(req.Group)
	if err != nil {
		out <- SyncResult{Err: err}
		return out
	}
	if g == nil {
		out <- SyncResult{Err: ErrUnknownMember}
		return out
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	m, err := g.checkSyncLocked(req)
	if err != nil {
		out <- SyncResult{Err: err}
		return out
	}
	delete(g.pendingSync, m.id)
	g.scheduleSessionLocked(m)
	switch g.state {
	case StateCompletingRebalance:
		g.answerSyncLocked(m, SyncResult{Err: ErrRebalanceInProgress}) // a retried SyncGroup
		m.syncWait = out
		if m.id == g.leader && !g.storing {
			g.storeAssignmentLocked(req.Assignments)
		}
	case StateStable:
		out <- SyncResult{ProtocolType: g.protocolType, Protocol: g.protocol, Assignment: m.assignment}
		g.syncDoneLocked()
	}
	return out
}

// checkGroupID fails requests once closed or for the empty group id.
func (c *Coordinator) checkGroupID(id string) error {
	if c.closed.Load() {
		return ErrNotCoordinator
	}
	if id == "" {
		return ErrInvalidGroupID
	}
	return nil
}

// checkSyncLocked validates a SyncGroup against the group: member,
// generation, protocol, and a state in which syncing makes sense.
func (g *group) checkSyncLocked(req SyncRequest) (*member, error) {
	if g.released {
		return nil, ErrNotCoordinator
	}
	if g.state == StateDead {
		return nil, ErrCoordinatorNotAvailable
	}
	m, err := g.memberForLocked(req.MemberID, req.InstanceID)
	switch {
	case err != nil:
		return nil, err
	case req.Generation != g.generation:
		return nil, ErrIllegalGeneration
	case req.ProtocolType != nil && *req.ProtocolType != g.protocolType,
		req.Protocol != nil && *req.Protocol != g.protocol:
		return nil, ErrInconsistentProtocol
	case g.state == StatePreparingRebalance:
		return nil, ErrRebalanceInProgress
	case g.state == StateEmpty:
		return nil, ErrUnknownMember
	}
	return m, nil
}

// storeAssignmentLocked takes the leader's assignment (members it left out
// get an empty one) and makes the generation durable; the waiting
// SyncGroups are answered when it is.
func (g *group) storeAssignmentLocked(assignments map[string][]byte) {
	g.storing = true
	for _, m := range g.members {
		m.assignment = append([]byte{}, assignments[m.id]...)
	}
	gen := g.generation
	rec := g.recordLocked()
	rec.StateMs = g.c.clock.Now().UnixMilli()
	g.persisted = true
	err := g.enqueueLocked(writeRecord(g.id, &rec), func(err error) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.assignmentStoredLocked(gen, err)
	})
	if err != nil {
		g.assignmentStoredLocked(gen, err)
	}
}

// assignmentStoredLocked makes the generation stable and hands out the
// assignments, unless a rebalance superseded it meanwhile. A failed write
// fails the waiting SyncGroups and starts over.
func (g *group) assignmentStoredLocked(gen int32, err error) {
	if g.released || g.generation != gen || g.state != StateCompletingRebalance || !g.storing {
		return
	}
	g.storing = false
	if err != nil {
		g.c.lg.Warn("group assignment not stored", "group", g.id, "generation", gen, "err", err)
		g.resetSyncLocked(err)
		g.prepareRebalanceLocked("storing the assignment failed")
		return
	}
	g.setStateLocked(StateStable)
	g.c.lg.Info("group stable", "group", g.id, "generation", gen, "members", len(g.members), "protocol", g.protocol)
	for _, m := range g.members {
		g.answerSyncLocked(m, SyncResult{ProtocolType: g.protocolType, Protocol: g.protocol, Assignment: m.assignment})
	}
	g.syncDoneLocked()
}

// syncDoneLocked stops the SyncGroup deadline once every member synced.
func (g *group) syncDoneLocked() {
	if g.state == StateStable && len(g.pendingSync) == 0 {
		g.stopRebalanceTimerLocked()
	}
}

// answerSyncLocked answers m's waiting SyncGroup, if any.
func (g *group) answerSyncLocked(m *member, res SyncResult) {
	if m.syncWait == nil {
		return
	}
	select {
	case m.syncWait <- res:
	default:
	}
	m.syncWait = nil
}
