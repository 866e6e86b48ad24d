package groupcoord

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sediment-io/sediment/metadata"
)

// TxnCommitRequest is a TxnOffsetCommit: offsets committed inside a
// transaction (KIP-98). From v3 on (KIP-447) it carries the generation,
// member id and group instance id, checked as an OffsetCommit's; older
// versions give generation -1 and no member, and are not checked.
type TxnCommitRequest struct {
	CommitRequest
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
}

// pendingOffset is one offset committed inside an open transaction,
// visible once the transaction commits.
type pendingOffset struct {
	metadata.CommittedOffset
	epoch int16 // the producer epoch it was committed with
}

// TxnCommit validates a transactional commit and keeps its offsets as
// pending for (group, producer id): FetchOffsets does not return them
// until CompleteTxn commits the transaction, and drops them if it aborts.
// A newer pending commit of the same producer and partition replaces the
// older one.
func (c *Coordinator) TxnCommit(req TxnCommitRequest) <-chan CommitResult {
	out := make(chan CommitResult, 1)
	if c.closed.Load() {
		out <- CommitResult{Err: ErrNotCoordinator}
		return out
	}
	g, err := c.lookup(req.Group)
	if err != nil {
		out <- CommitResult{Err: err}
		return out
	}
	if g == nil {
		if req.Generation >= 0 {
			out <- CommitResult{Err: ErrIllegalGeneration}
			return out
		}
		// As Kafka does, a transactional commit without a generation
		// creates the group.
		if g, err = c.getOrCreate(req.Group); err != nil {
			out <- CommitResult{Err: err}
			return out
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.checkTxnCommitLocked(req); err != nil {
		out <- CommitResult{Err: err}
		return out
	}
	g.txnCommitLocked(req, out)
	return out
}

// checkTxnCommitLocked is Kafka's validateOffsetCommit for a transactional
// commit: like checkCommitLocked, except that a commit without generation
// and member is accepted whatever the group's state (the old versions
// carry neither), a rebalance in progress does not refuse it, and the
// member's session is not renewed by it. A producer epoch older than one
// of the producer's pending commits in the group is fenced.
func (g *group) checkTxnCommitLocked(req TxnCommitRequest) error {
	switch {
	case g.released:
		return ErrNotCoordinator
	case g.state == StateDead:
		return ErrCoordinatorNotAvailable
	case req.Generation < 0 && g.state == StateEmpty:
	case req.Generation < 0 && req.MemberID == "" && req.InstanceID == nil:
	default:
		if _, err := g.memberForLocked(req.MemberID, req.InstanceID); err != nil {
			return err
		}
		if req.Generation != g.generation {
			return ErrIllegalGeneration
		}
	}
	for _, p := range g.txnOffsets[req.ProducerID] {
		if req.ProducerEpoch < p.epoch {
			return fmt.Errorf("groupcoord: group %q: producer %d epoch %d, pending offsets hold epoch %d: %w",
				g.id, req.ProducerID, req.ProducerEpoch, p.epoch, kerr.ProducerFenced)
		}
	}
	return nil
}

// txnCommitLocked checks each offset and keeps the good ones as pending.
func (g *group) txnCommitLocked(req TxnCommitRequest, out chan CommitResult) {
	s := g.c.settings()
	now := g.c.clock.Now().UnixMilli()
	errs := make([]error, len(req.Offsets))
	for i, o := range req.Offsets {
		md := ""
		if o.Metadata != nil {
			md = *o.Metadata
		}
		id, parts, ok := g.c.cluster.TopicPartitions(o.Topic)
		switch {
		case len(md) > s.metadataMaxBytes:
			errs[i] = ErrMetadataTooLarge
		case !ok || o.Partition < 0 || o.Partition >= parts:
			errs[i] = ErrUnknownTopicOrPartition
		default:
			if g.txnOffsets == nil {
				g.txnOffsets = map[int64]map[metadata.GroupPartition]*pendingOffset{}
			}
			byTP := g.txnOffsets[req.ProducerID]
			if byTP == nil {
				byTP = map[metadata.GroupPartition]*pendingOffset{}
				g.txnOffsets[req.ProducerID] = byTP
			}
			byTP[metadata.GroupPartition{Topic: o.Topic, Partition: o.Partition}] = &pendingOffset{
				CommittedOffset: metadata.CommittedOffset{TopicID: id, Offset: o.Offset, LeaderEpoch: o.LeaderEpoch, Metadata: md, CommitMs: now},
				epoch:           req.ProducerEpoch,
			}
		}
	}
	out <- CommitResult{Partitions: errs}
}

// CompleteTxn ends producer pid's transaction in every group of shard that
// holds pending offsets of it: on commit they become the committed offsets,
// on abort they are dropped. It returns once that is durable. Repeating it
// after completion does nothing. ErrNotCoordinator: the shard is not
// served here.
func (c *Coordinator) CompleteTxn(ctx context.Context, shard int32, pid int64, epoch int16, commit bool) error {
	if c.closed.Load() {
		return ErrNotCoordinator
	}
	if shard < 0 || shard >= Shards {
		return fmt.Errorf("groupcoord: complete transaction: shard %d outside [0, %d)", shard, Shards)
	}
	c.mu.Lock()
	o := c.shards[shard]
	c.mu.Unlock()
	if o == nil || o.releasing.Load() || !c.fenceValid(o) {
		return ErrNotCoordinator
	}
	var waits []chan error
	for _, g := range c.allGroups() {
		if g.own != o {
			continue
		}
		g.mu.Lock()
		done, err := g.completeTxnLocked(pid, epoch, commit)
		g.mu.Unlock()
		if err != nil {
			return err
		}
		if done != nil {
			waits = append(waits, done)
		}
	}
	for _, w := range waits {
		select {
		case err := <-w:
			if err != nil {
				return err
			}
		case <-ctx.Done():
			return fmt.Errorf("groupcoord: complete transaction of producer %d: %w", pid, ctx.Err())
		}
	}
	return nil
}

// completeTxnLocked ends pid's transaction in g: nil channel when g holds
// no pending offset of pid, else one that gets the outcome once durable.
func (g *group) completeTxnLocked(pid int64, epoch int16, commit bool) (chan error, error) {
	if g.released {
		return nil, ErrNotCoordinator
	}
	pending := g.txnOffsets[pid]
	if len(pending) == 0 {
		return nil, nil
	}
	for _, p := range pending {
		if epoch < p.epoch {
			return nil, fmt.Errorf("groupcoord: group %q: marker of producer %d epoch %d older than its pending offsets' epoch %d: %w",
				g.id, pid, epoch, p.epoch, kerr.InvalidProducerEpoch)
		}
	}
	delete(g.txnOffsets, pid)
	done := make(chan error, 1)
	if !commit {
		done <- nil
		return done, nil
	}
	writes := make([]metadata.OffsetWrite, 0, len(pending))
	for tp, p := range pending {
		off := p.CommittedOffset
		writes = append(writes, metadata.OffsetWrite{GroupPartition: tp, Offset: &off})
	}
	g.queueOffsetsLocked(writes, func(errs []error) {
		for _, err := range errs {
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	})
	return done, nil
}

// unstableLocked says whether a partition has offsets pending in an open
// transaction of any producer.
func (g *group) unstableLocked(tp metadata.GroupPartition) bool {
	for _, byTP := range g.txnOffsets {
		if byTP[tp] != nil {
			return true
		}
	}
	return false
}

// errUnstable is a partition's answer to an OffsetFetch with require_stable
// while offsets are pending in a transaction.
func errUnstable(tp metadata.GroupPartition) error {
	return fmt.Errorf("groupcoord: %s-%d has offsets pending in an open transaction: %w", tp.Topic, tp.Partition, kerr.UnstableOffsetCommit)
}
