package groupcoord

import "github.com/sediment-io/sediment/metadata"

// CommitRequest is an OffsetCommit.
type CommitRequest struct {
	Group      string
	MemberID   string
	InstanceID *string
	// Generation is -1 for commits from outside group management (admin
	// clients, consumers that assign partitions themselves).
	Generation int32
	// GroupNotFoundError (OffsetCommit v9+): a commit with a generation to
	// a group that does not exist fails with ErrGroupNotFound rather than
	// ErrIllegalGeneration.
	GroupNotFoundError bool
	Offsets            []CommitOffset
}

// CommitOffset is one partition's offset to commit.
type CommitOffset struct {
	Topic       string
	Partition   int32
	Offset      int64
	LeaderEpoch int32
	Metadata    *string
}

// CommitResult answers a commit: Err for the whole request, else one error
// per offset (nil: durable).
type CommitResult struct {
	Err        error
	Partitions []error
}

// Commit validates a commit and makes its offsets durable, in one metadata
// transaction (shared with whatever else is pending) when they fit in one,
// else in several (see queueOffsetsLocked). The result arrives once they
// are durable.
func (c *Coordinator) Commit(req CommitRequest) <-chan CommitResult {
	out := make(chan CommitResult, 1)
	g, err := c.commitGroup(req)
	if err != nil {
		out <- CommitResult{Err: err}
		return out
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.checkCommitLocked(req); err != nil {
		out <- CommitResult{Err: err}
		return out
	}
	g.commitLocked(req, out)
	return out
}

// commitGroup returns the group a commit (plain or transactional) goes
// to. A commit without a generation to a group that does not exist
// creates it, as Kafka does; one with a generation is refused.
func (c *Coordinator) commitGroup(req CommitRequest) (*group, error) {
	if c.closed.Load() {
		return nil, ErrNotCoordinator
	}
	g, err := c.lookup(req.Group)
	if err != nil || g != nil {
		return g, err
	}
	if req.Generation >= 0 {
		if req.GroupNotFoundError {
			return nil, ErrGroupNotFound
		}
		return nil, ErrIllegalGeneration
	}
	return c.getOrCreate(req.Group)
}

// checkCommitLocked decides whether the committer may commit: anyone to
// an empty group without a generation, else a current member of the
// current generation outside CompletingRebalance.
func (g *group) checkCommitLocked(req CommitRequest) error {
	switch {
	case g.released:
		return ErrNotCoordinator
	case g.state == StateDead:
		return ErrCoordinatorNotAvailable
	case req.Generation < 0 && g.state == StateEmpty:
		return nil
	case req.Generation < 0 && req.MemberID == "" && req.InstanceID == nil:
		return ErrUnknownMember // a standalone commit to a group in use
	}
	m, err := g.memberForLocked(req.MemberID, req.InstanceID)
	switch {
	case err != nil:
		return err
	case req.Generation != g.generation:
		return ErrIllegalGeneration
	case g.state == StateCompletingRebalance:
		return ErrRebalanceInProgress
	}
	g.scheduleSessionLocked(m)
	return nil
}

// validOffset is an offset of a commit that checkOffsetsLocked let
// through: its index in the commit, its topic's id and its metadata.
type validOffset struct {
	i  int
	id metadata.TopicID
	md string
}

// checkOffsetsLocked checks each offset of a commit, plain or
// transactional: its metadata's size and its partition. It sets errs[i]
// for a bad one and returns the good ones, in order.
func (g *group) checkOffsetsLocked(s settings, offsets []CommitOffset, errs []error) []validOffset {
	var ok []validOffset
	for i, o := range offsets {
		md := ""
		if o.Metadata != nil {
			md = *o.Metadata
		}
		id, parts, known := g.c.cluster.TopicPartitions(o.Topic)
		switch {
		case len(md) > s.metadataMaxBytes:
			errs[i] = ErrMetadataTooLarge
		case !known || o.Partition < 0 || o.Partition >= parts:
			errs[i] = ErrUnknownTopicOrPartition
		default:
			ok = append(ok, validOffset{i: i, id: id, md: md})
		}
	}
	return ok
}

// commitLocked checks each offset and queues the good ones.
func (g *group) commitLocked(req CommitRequest, out chan CommitResult) {
	s := g.c.settings()
	now := g.c.clock.Now().UnixMilli()
	errs := make([]error, len(req.Offsets))
	var writes []metadata.OffsetWrite
	var written []int
	for _, v := range g.checkOffsetsLocked(s, req.Offsets, errs) {
		o := req.Offsets[v.i]
		writes = append(writes, metadata.OffsetWrite{GroupPartition: metadata.GroupPartition{Topic: o.Topic, Partition: o.Partition},
			Offset: &metadata.CommittedOffset{TopicID: v.id, Offset: o.Offset, LeaderEpoch: o.LeaderEpoch, Metadata: v.md, CommitMs: now}})
		written = append(written, v.i)
	}
	if len(writes) == 0 {
		out <- CommitResult{Partitions: errs}
		return
	}
	g.queueOffsetsLocked(writes, func(werrs []error) {
		for j, i := range written {
			errs[i] = werrs[j]
		}
		out <- CommitResult{Partitions: errs}
	})
}

// queueOffsetsLocked queues offsets (with the group's record if it was
// never stored) and applies them in memory once durable; then done runs
// with one error per write (nil: durable). More offsets than one
// transaction takes are split into several changes (changeRanges), each
// durable on its own, so that each partition is answered for what happened
// to it, as Kafka answers an OffsetCommit per partition.
func (g *group) queueOffsetsLocked(writes []metadata.OffsetWrite, done func([]error)) {
	g.queueSplitLocked(changeRanges(writes), len(writes), func(start, end int) metadata.GroupWrite {
		return metadata.GroupWrite{Offsets: writes[start:end]}
	}, done)
}

// queueSplitLocked queues one change per range [start, end) of n writes,
// made by change; done runs once all are durable or failed, with one error
// per write.
func (g *group) queueSplitLocked(ranges [][2]int, n int, change func(start, end int) metadata.GroupWrite, done func([]error)) {
	errs := make([]error, n)
	left := len(ranges) // guarded by g.mu
	for k, r := range ranges {
		start, end := r[0], r[1]
		err := g.queueChangeLocked(change(start, end), func(err error) {
			g.mu.Lock()
			for i := start; i < end; i++ {
				errs[i] = err
			}
			left--
			last := left == 0
			g.mu.Unlock()
			if last {
				done(errs)
			}
		})
		if err != nil { // not queued: neither is the rest
			for i := start; i < n; i++ {
				errs[i] = err
			}
			if left -= len(ranges) - k; left == 0 {
				done(errs)
			}
			return
		}
	}
}

// queueChangeLocked queues one change of g's offsets, committed or pending
// (with the group's record if it was never stored), and applies it in
// memory once durable; then done runs, without the group's lock.
func (g *group) queueChangeLocked(w metadata.GroupWrite, done func(error)) error {
	w.Group = g.id
	created := !g.persisted
	if created {
		rec := g.recordLocked()
		w.Record = &rec
		g.persisted = true
	}
	pids := txnProducers(w)
	g.inflight++
	g.txnQueuedLocked(pids)
	err := g.enqueueLocked(w, func(err error) {
		g.mu.Lock()
		g.txnDoneLocked(pids)
		g.changeStoredLocked(w, created, err)
		for _, pid := range pids {
			g.indexTxnLocked(pid)
		}
		g.mu.Unlock()
		done(err)
	})
	if err != nil {
		g.inflight--
		g.txnDoneLocked(pids)
		for _, pid := range pids {
			g.indexTxnLocked(pid)
		}
		g.persisted = !created
	}
	return err
}

// changeStoredLocked applies a durable change of offsets in memory, and
// wakes what waits for no change to be in flight (fetches with
// require_stable, transaction completions).
func (g *group) changeStoredLocked(w metadata.GroupWrite, created bool, err error) {
	g.inflight--
	if err != nil {
		if created {
			g.persisted = false
		}
	} else {
		g.applyTxnOffsetsLocked(w)
		puts := 0
		for _, o := range w.Offsets {
			if o.Offset == nil {
				delete(g.offsets, o.GroupPartition)
				continue
			}
			g.offsets[o.GroupPartition] = &offsetState{*o.Offset}
			puts++
		}
		if puts > 0 {
			g.c.m.commits.Add(float64(puts))
			g.c.m.commitReqs.Inc()
		}
	}
	if g.inflight == 0 {
		waiters := g.stableWaiters
		g.stableWaiters = nil
		for _, wake := range waiters {
			wake()
		}
	}
}
