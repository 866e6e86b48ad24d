package partition

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/sediment-io/sediment/metadata"
)

// Reads from any broker (KIP-392). Every offset below a partition's
// committed end (metadata's PartitionState.NextOffset) is in a segment of
// the shared bucket and indexed in metadata, so a broker that does not own
// the partition can serve it from the bucket and its block cache, as a
// Kafka follower serves what it has replicated. It never reads the
// partition's in-memory batches: those of a partition not owned here are
// stale or uncommitted, and another owner may have written those offsets
// since.

// replicaRefreshMin bounds the metadata reads of a partition read as a
// replica: however many fetches ask, its committed end is read at most
// once per this interval.
const replicaRefreshMin = 100 * time.Millisecond

// replicaMaxAge is how long a view read below its end serves without
// being read again; it bounds how long a replica goes on serving a topic
// deleted by another broker before its next topic sync.
const replicaMaxAge = time.Second

// replicaView is what a broker knows of a partition's committed log while
// it does not own it: the log start and committed end it read from
// metadata last, and when. One fetch reads metadata at a time; the others
// wait for its answer.
type replicaView struct {
	mu       sync.Mutex // guards the fields below; a leaf, never held across I/O
	logStart int64
	end      int64
	readAt   time.Time // last successful read; zero: never
	triedAt  time.Time // last attempt, successful or not
	stale    bool      // a read below end found no segment: the log start moved
	gone     bool      // the partition is not in metadata: its topic was deleted
	// epochs is the leader-epoch history read after end, so that every
	// epoch that started below end is in it.
	epochs  metadata.LeaderEpochs
	loading chan struct{}
	// txns is what the view knows of the partition's transactions, for
	// read_committed reads (ReadReplicaCommitted); read on demand.
	txns replicaTxns
}

// replicaTxns is a partition's transactional state as its committed
// producer records (the ones a new owner rebuilds from) gave it.
type replicaTxns struct {
	read bool
	// asOf is a committed end the producer records were read at or after:
	// the view's end before they were read, as the records only grow.
	asOf int64
	// openFirst is the first offset of the oldest transaction those
	// records have open, math.MaxInt64 with none.
	openFirst int64
	// aborted is the aborted-transaction index, sorted by marker offset.
	aborted []AbortedTxn
	loading chan struct{}
}

// replicaOffsets is one answer of a replicaView.
type replicaOffsets struct {
	logStart, end int64
	gone          bool
}

// needsReadLocked says whether a fetch at offset reads metadata first.
func (v *replicaView) needsReadLocked(offset int64, now time.Time) bool {
	if v.gone {
		return false
	}
	if now.Sub(v.triedAt) < replicaRefreshMin {
		return false
	}
	return v.readAt.IsZero() || offset >= v.end || v.stale || now.Sub(v.readAt) >= replicaMaxAge
}

func (v *replicaView) offsetsLocked() replicaOffsets {
	return replicaOffsets{logStart: v.logStart, end: v.end, gone: v.gone}
}

// ReplicaOffsets returns the log start and committed end this broker last
// read for p as a replica, without reading metadata; -1 and -1 before its
// first read.
func (p *Partition) ReplicaOffsets() (logStart, end int64) {
	v := &p.replica
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.readAt.IsZero() {
		return -1, -1
	}
	return v.logStart, v.end
}

// replicaOffsets returns p's committed log as metadata gave it, read again
// when a fetch at offset needs it (at or past the end it knows, a log
// start that moved, or older than replicaMaxAge) and no read began in the
// last replicaRefreshMin.
func (l *Log) replicaOffsets(ctx context.Context, p *Partition, offset int64) (replicaOffsets, error) {
	v := &p.replica
	for range 3 {
		v.mu.Lock()
		if !v.needsReadLocked(offset, time.Now()) {
			defer v.mu.Unlock()
			return v.answerLocked(p)
		}
		if ch := v.loading; ch != nil {
			v.mu.Unlock()
			select {
			case <-ch: // its answer is in the view now, or it failed
				continue
			case <-ctx.Done():
				return replicaOffsets{}, ctx.Err()
			}
		}
		ch := make(chan struct{})
		v.loading, v.triedAt = ch, time.Now()
		v.mu.Unlock()
		err := l.readReplicaView(ctx, p)
		v.mu.Lock()
		v.loading = nil
		close(ch)
		o, known := v.answerLocked(p)
		v.mu.Unlock()
		if err != nil {
			return replicaOffsets{}, err
		}
		return o, known
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.answerLocked(p)
}

// answerLocked is the view's answer, or ErrStorage when it was never read.
func (v *replicaView) answerLocked(p *Partition) (replicaOffsets, error) {
	if v.readAt.IsZero() && !v.gone {
		return replicaOffsets{}, fmt.Errorf("%w: %s/%d: committed end not known yet", ErrStorage, p.topic.Name, p.index)
	}
	return v.offsetsLocked(), nil
}

// readReplicaView reads p's state, then its leader epochs, from metadata
// into its view. The view only moves forward: a log start and a committed
// end never fall.
func (l *Log) readReplicaView(ctx context.Context, p *Partition) error {
	st, ok, err := l.meta.PartitionState(ctx, p.topic.ID, p.index)
	if err != nil {
		return fmt.Errorf("%w: partition state of %s/%d: %v", ErrStorage, p.topic.Name, p.index, err)
	}
	var epochs metadata.LeaderEpochs
	if ok {
		if epochs, err = l.meta.LeaderEpochs(ctx, p.topic.ID, p.index); err != nil {
			return fmt.Errorf("%w: %v", ErrStorage, err)
		}
	}
	v := &p.replica
	v.mu.Lock()
	defer v.mu.Unlock()
	v.readAt, v.stale = time.Now(), false
	if !ok {
		v.gone = true
		return nil
	}
	if st.NextOffset >= v.end {
		v.epochs = epochs
	}
	v.logStart, v.end = max(v.logStart, st.LogStartOffset), max(v.end, st.NextOffset)
	return nil
}

// ReplicaEpochView returns p's committed log as a broker that does not own
// it knows it, for a fetch at offset (reading metadata as ReadReplica
// does): the leader epochs, the log start, and the committed end as both
// high watermark and log end. A fetch below that end checks the client's
// last fetched epoch against it, as a Kafka follower checks its own log.
func (l *Log) ReplicaEpochView(ctx context.Context, p *Partition, offset int64) (EpochView, error) {
	o, err := l.replicaOffsets(ctx, p, offset)
	if err != nil {
		return EpochView{}, err
	}
	if o.gone {
		return EpochView{}, fmt.Errorf("%w: %s/%d: its topic was deleted", ErrUnknownPartition, p.topic.Name, p.index)
	}
	v := &p.replica
	v.mu.Lock()
	epochs := v.epochs
	v.mu.Unlock()
	return EpochView{Epochs: epochs.TruncateFromStart(o.logStart), LogStart: o.logStart, HighWatermark: o.end, LogEnd: o.end}, nil
}

// ReadReplicaCommitted is ReadReplica for read_committed consumers: a
// partition this log owns is read as ReadCommitted reads it; otherwise it
// is read from the committed log in the bucket, strictly below its last
// stable offset as metadata knows it, and the answer lists the aborted
// transactions overlapping its batches, sorted by first offset. That last
// stable offset is the first offset of the oldest transaction still open
// in the committed producer records, else the committed end (which is the
// answer's high watermark); at or past it the answer has no batches.
//
// The producer records are read after the committed end, so they may be
// of a later end: a transaction they show ended was decided by a marker
// durable in the bucket, and when it aborted its range is in the aborted
// index, so every batch below the committed end is still read as a
// read_committed consumer of the owner reads it. The owner may hold its
// last stable offset back a little longer (until that marker is under
// its high watermark), never past a different record.
func (l *Log) ReadReplicaCommitted(ctx context.Context, p *Partition, offset int64, maxBytes int, first bool) (FetchResult, error) {
	if err := l.CheckLeader(p); err == nil || !errors.Is(err, ErrNotLeader) {
		return l.ReadCommitted(ctx, p, offset, maxBytes, first)
	}
	return l.readReplicaRetried(ctx, p, offset, maxBytes, first, true)
}

// ReadReplica reads p for a consumer that may be served by any broker
// (Fetch v11+, KIP-392). A partition this log owns is read as Read reads
// it. Otherwise it is read from the committed log in the bucket, strictly
// below the committed end this broker knows, which is the answer's high
// watermark: below the log start is ErrOffsetOutOfRange (the answer still
// carries both offsets), at or past the committed end no batches, and a
// partition whose topic was deleted ErrUnknownPartition.
func (l *Log) ReadReplica(ctx context.Context, p *Partition, offset int64, maxBytes int, first bool) (FetchResult, error) {
	if err := l.CheckLeader(p); err == nil || !errors.Is(err, ErrNotLeader) {
		return l.Read(ctx, p, offset, maxBytes, first)
	}
	return l.readReplicaRetried(ctx, p, offset, maxBytes, first, false)
}

// readReplicaRetried reads p as a replica (read_committed when committed
// is set), planning again after a batch moved, a bounded number of times.
func (l *Log) readReplicaRetried(ctx context.Context, p *Partition, offset int64, maxBytes int, first, committed bool) (FetchResult, error) {
	for attempt := 1; ; attempt++ {
		res, err := l.readReplica(ctx, p, offset, maxBytes, first, committed)
		if err == nil {
			return res, nil
		}
		if !retryableRead(err) || attempt == maxReadAttempts || ctx.Err() != nil {
			res.Batches, res.Wire, res.Bytes, res.Source = nil, nil, 0, ""
			return res, err
		}
	}
}

func (l *Log) readReplica(ctx context.Context, p *Partition, offset int64, maxBytes int, first, committed bool) (FetchResult, error) {
	p.mu.Lock()
	deleted := p.deleted
	p.mu.Unlock()
	if deleted {
		return FetchResult{}, fmt.Errorf("%w: %s/%d", ErrUnknownPartition, p.topic.Name, p.index)
	}
	probe := offset
	if committed {
		probe = p.replica.committedProbe(offset)
	}
	o, err := l.replicaOffsets(ctx, p, probe)
	if err != nil {
		return FetchResult{}, err
	}
	if o.gone {
		return FetchResult{}, fmt.Errorf("%w: %s/%d: its topic was deleted", ErrUnknownPartition, p.topic.Name, p.index)
	}
	res := FetchResult{HighWatermark: o.end, LogStartOffset: o.logStart, LastStableOffset: o.end, Replica: true}
	var txns replicaTxns
	if committed {
		if txns, err = l.replicaTxns(ctx, p, o.end); err != nil {
			return FetchResult{}, err
		}
		res.LastStableOffset = max(o.logStart, min(o.end, txns.openFirst))
	}
	switch {
	case offset < o.logStart:
		return res, fmt.Errorf("%w: %d below the log start %d", ErrOffsetOutOfRange, offset, o.logStart)
	case offset >= res.LastStableOffset:
		// Not committed yet, as a follower has not replicated it yet, or
		// (read_committed) in a transaction not decided yet.
		return res, nil
	}
	got, err := l.readObjects(ctx, p, offset, readPlan{res: res, fromObjects: true, objectEnd: res.LastStableOffset}, maxBytes, first)
	if err == nil && committed && got.next > offset {
		ps := producers{aborted: txns.aborted}
		got.Aborted = ps.abortedIn(offset, got.next-1)
	}
	if err == nil && got.Bytes == 0 {
		// No segment holds offset any more: retention moved the log
		// start since the view was read.
		p.replica.mu.Lock()
		p.replica.stale = true
		p.replica.mu.Unlock()
	}
	return got, err
}

// committedProbe is the offset a read_committed read at offset asks the
// view for: a reader at or past the last stable offset it knows waits for
// a transaction to end, which only a later committed end shows, so it
// reads metadata again as a reader at the end does (at most once per
// replicaRefreshMin), not only once the view is replicaMaxAge old.
func (v *replicaView) committedProbe(offset int64) int64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.txns.read && offset >= min(v.end, v.txns.openFirst) {
		return max(offset, v.end)
	}
	return offset
}

// replicaTxns returns p's transactional state from its committed producer
// records read at or after committed end end: read again when the state
// the view holds was read before end. One fetch reads metadata at a time;
// the others wait for its answer.
func (l *Log) replicaTxns(ctx context.Context, p *Partition, end int64) (replicaTxns, error) {
	v := &p.replica
	for range 3 {
		v.mu.Lock()
		if v.txns.read && v.txns.asOf >= end {
			t := v.txns
			v.mu.Unlock()
			return t, nil
		}
		if ch := v.txns.loading; ch != nil {
			v.mu.Unlock()
			select {
			case <-ch: // its answer is in the view now, or it failed
				continue
			case <-ctx.Done():
				return replicaTxns{}, ctx.Err()
			}
		}
		ch := make(chan struct{})
		v.txns.loading = ch
		asOf := max(v.end, end)
		v.mu.Unlock()
		t, err := l.readReplicaTxns(ctx, p, asOf)
		v.mu.Lock()
		v.txns.loading = nil
		close(ch)
		if err == nil && (!v.txns.read || asOf > v.txns.asOf) {
			v.txns = t
		}
		v.mu.Unlock()
		return t, err
	}
	return replicaTxns{}, fmt.Errorf("%w: %s/%d: transactional state not read yet", ErrStorage, p.topic.Name, p.index)
}

// readReplicaTxns reads p's transactional state from its committed
// producer records, which metadata commits with the segments: read now,
// they are of a committed end at or past asOf.
func (l *Log) readReplicaTxns(ctx context.Context, p *Partition, asOf int64) (replicaTxns, error) {
	list, err := l.meta.ProducerStates(ctx, p.topic.ID, p.index)
	if err != nil {
		return replicaTxns{}, fmt.Errorf("%w: producer state of %s/%d: %v", ErrStorage, p.topic.Name, p.index, err)
	}
	ps := loadProducers(list)
	t := replicaTxns{read: true, asOf: asOf, openFirst: ps.firstUnstable(math.MaxInt64), aborted: ps.aborted}
	return t, nil
}

// CommittedRange returns p's log start and committed end when this log
// leads p, for the owner's choice of a preferred read replica: only an
// offset in that range is in the bucket for another broker to serve.
func (l *Log) CommittedRange(p *Partition) (logStart, end int64, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := l.leadsLocked(p); err != nil {
		return 0, 0, err
	}
	return p.logStart, p.committed, nil
}
