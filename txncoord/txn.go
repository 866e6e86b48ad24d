package txncoord

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sediment-io/sediment/metadata"
)

// noEpoch and noProducerID stand for "none" in records and requests, as
// Kafka's RecordBatch.NO_PRODUCER_EPOCH and NO_PRODUCER_ID.
const (
	noEpoch      int16 = -1
	noProducerID int64 = -1
)

// record is a transactional id's state (Kafka's TransactionMetadata).
type record struct {
	pid, lastPid     int64
	epoch, lastEpoch int16
	timeoutMs        int32
	state            State
	partitions       []TopicPartition // the open transaction's, in the order added
	groups           []string         // the open transaction's groups (AddOffsets)
	startMs          int64            // first add of the transaction; -1 none
	updateMs         int64
}

// txn is one transactional id of a shard.
type txn struct {
	id string
	sh *shard

	mu      sync.Mutex // guards the fields below
	rec     record
	version int64 // of the stored record; 0: none (the id does not exist)
	// writing: a write of the record is in flight (Kafka's pending
	// transition): other transitions answer CONCURRENT_TRANSACTIONS.
	writing bool
	// completing: a marker writer runs for the Prepare* state.
	completing bool
	// gone: removed from sh.txns (expired); a holder looks the id up again.
	gone bool
}

// exists says whether the id has a stored record.
func (t *txn) exists() bool { return t.version != 0 }

// lockTxn returns id's txn in sh, locked and not gone; with create, a new
// one (not stored, exists() false) when there is none, else nil.
func (sh *shard) lockTxn(id string, create bool) (*txn, error) {
	for range 8 {
		sh.mu.Lock()
		t := sh.txns[id]
		if t == nil && create {
			t = &txn{id: id, sh: sh}
			sh.txns[id] = t
		}
		sh.mu.Unlock()
		if t == nil {
			return nil, nil
		}
		t.mu.Lock()
		if !t.gone {
			return t, nil
		}
		t.mu.Unlock()
	}
	return nil, fmt.Errorf("txncoord: transactional id %q keeps being removed: %w", id, kerr.CoordinatorNotAvailable)
}

// forgetLocked removes t from its shard (its record was deleted, or its
// creation failed).
func (t *txn) forgetLocked() {
	t.gone = true
	t.sh.mu.Lock()
	if t.sh.txns[t.id] == t {
		delete(t.sh.txns, t.id)
	}
	t.sh.mu.Unlock()
}

// storeLocked makes rec t's durable record (state Dead: deletes it) by a
// compare-and-swap on t's version under the shard's fence. t.mu is
// released during the write and held again on return; meanwhile
// t.writing makes other transitions answer CONCURRENT_TRANSACTIONS. On
// failure t keeps its record, or what metadata holds when the write's
// outcome is in doubt; a lost fence drops the shard.
func (c *Coordinator) storeLocked(t *txn, rec record) error {
	sh := t.sh
	if t.writing {
		return fmt.Errorf("txncoord: store %q: another write is in flight: %w", t.id, kerr.ConcurrentTransactions)
	}
	if !c.writable(sh) {
		return errNotCoordinator("shard %d is not owned here any more", sh.id)
	}
	var stored *metadata.TxnRecord
	if rec.state != Dead {
		stored = rec.stored()
	}
	t.writing = true
	version := t.version
	t.mu.Unlock()
	v, err := c.persist.write(sh, metadata.TxnWrite{ID: t.id, Version: version, Record: stored})
	var reread *metadata.StoredTxn
	if err != nil {
		reread, err = c.writeFailed(sh, t.id, err)
	}
	t.mu.Lock()
	t.writing = false
	if reread != nil {
		c.adoptLocked(t, *reread)
	}
	if err != nil {
		if !t.exists() {
			t.forgetLocked()
		}
		return err
	}
	t.rec, t.version = rec, v
	return nil
}

// writeFailed classifies a failed write: a lost fence drops the shard
// (NOT_COORDINATOR: another coordinator owns it now); anything else is
// COORDINATOR_NOT_AVAILABLE, which clients retry. After a lost
// compare-and-swap or an unknown outcome under a fence that holds, it
// reads the record back (reread): metadata holds the truth.
func (c *Coordinator) writeFailed(sh *shard, id string, err error) (*metadata.StoredTxn, error) {
	if !metadata.IsConflict(err) && !metadata.IsUncertain(err) {
		c.lg.Warn("transaction record not stored", "transactional_id", id, "err", err)
		return nil, fmt.Errorf("txncoord: store %q: %w: %w", id, kerr.CoordinatorNotAvailable, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	holds, ferr := c.cfg.Meta.TxnFenceHolds(ctx, sh.fence)
	if ferr == nil && !holds {
		c.lg.Error("transaction coordinator shard fenced: another coordinator owns it now", "shard", sh.id,
			"fence", sh.fence.Version)
		c.drop(sh, "dropped: its fence moved")
		return nil, fmt.Errorf("txncoord: store %q: %w: %w", id, kerr.NotCoordinator, err)
	}
	var reread *metadata.StoredTxn
	if st, ok, rerr := c.cfg.Meta.ReadTxn(ctx, id); ferr == nil && rerr == nil {
		if !ok {
			st = metadata.StoredTxn{ID: id}
		}
		reread = &st
	}
	c.lg.Error("transaction record write lost its compare-and-swap or has an unknown outcome: read back",
		"transactional_id", id, "err", err)
	return reread, fmt.Errorf("txncoord: store %q: %w: %w", id, kerr.CoordinatorNotAvailable, err)
}

// adoptLocked makes st, read back from metadata, t's state, and resumes
// its markers if it is in Prepare*.
func (c *Coordinator) adoptLocked(t *txn, st metadata.StoredTxn) {
	if st.Version == 0 {
		t.rec, t.version = record{}, 0
		return
	}
	rec, err := recordFromStored(st.Record)
	if err != nil {
		c.lg.Error("transaction record read back is unreadable", "transactional_id", t.id, "err", err)
		return
	}
	t.rec, t.version = rec, st.Version
	if rec.state == PrepareCommit || rec.state == PrepareAbort {
		c.completeLocked(t)
	}
}

// stored is rec as metadata keeps it.
func (r record) stored() *metadata.TxnRecord {
	out := &metadata.TxnRecord{ProducerID: r.pid, ProducerEpoch: r.epoch, LastProducerID: r.lastPid,
		LastProducerEpoch: r.lastEpoch, TimeoutMs: r.timeoutMs, State: r.state.String(), Groups: r.groups,
		StartMs: r.startMs, UpdateMs: r.updateMs}
	for _, tp := range r.partitions {
		out.Partitions = append(out.Partitions, metadata.TxnPartition{Topic: tp.Topic, Partition: tp.Partition})
	}
	return out
}

// recordFromStored is the record metadata kept.
func recordFromStored(s metadata.TxnRecord) (record, error) {
	state, ok := ParseState(s.State)
	if !ok {
		return record{}, fmt.Errorf("unknown state %q", s.State)
	}
	r := record{pid: s.ProducerID, lastPid: s.LastProducerID, epoch: s.ProducerEpoch, lastEpoch: s.LastProducerEpoch,
		timeoutMs: s.TimeoutMs, state: state, groups: s.Groups, startMs: s.StartMs, updateMs: s.UpdateMs}
	for _, tp := range s.Partitions {
		r.partitions = append(r.partitions, TopicPartition{Topic: tp.Topic, Partition: tp.Partition})
	}
	return r, nil
}

// epochExhausted says whether an epoch is too high to bump again for
// another producer session (Kafka's isEpochExhausted): the last value is
// kept for fencing the session that has it.
func epochExhausted(e int16) bool { return e >= math.MaxInt16-1 }

// inFlight says whether the state is one whose markers are being written.
func (s State) inFlight() bool {
	return s == PrepareCommit || s == PrepareAbort || s == PrepareEpochFence
}

// idle says whether no transaction is open in the state.
func (s State) idle() bool { return s == Empty || s == CompleteCommit || s == CompleteAbort }

// withAdded returns r with partitions and groups added to its
// transaction, starting one (at now) when none is open.
func (r record) withAdded(parts []TopicPartition, groups []string, now int64) record {
	if r.state != Ongoing {
		r.partitions, r.groups, r.startMs = nil, nil, now
	}
	r.partitions = slices.Clone(r.partitions)
	for _, tp := range parts {
		if !slices.Contains(r.partitions, tp) {
			r.partitions = append(r.partitions, tp)
		}
	}
	r.groups = slices.Clone(r.groups)
	for _, g := range groups {
		if !slices.Contains(r.groups, g) {
			r.groups = append(r.groups, g)
		}
	}
	r.state, r.updateMs = Ongoing, now
	return r
}
