package partition

import (
	"context"
	"sort"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/internal/lockrank"
	"github.com/sediment-io/sediment/storage/wal"
)

// batchRef is one stored record batch of a partition as the live log knows
// it: where it is, and its bytes while they are cached.
type batchRef struct {
	part     *Partition
	base     int64 // first offset
	end      int64 // one past the last offset
	maxTS    int64
	epoch    int32 // the leader epoch stamped in the batch
	size     int
	appendMs int64   // when the broker appended it, on its clock
	walPos   wal.Pos // frame holding the batch; valid when hasWAL
	walEnd   wal.Pos // end of that frame: the batch is durable once the WAL is
	hasWAL   bool
	data     []byte    // the batch; nil once evicted from the tail cache
	uploaded bool      // committed to the object store and metadata
	txn      txnEffect // what the batch did to its producer's transaction
	// dropOnUpload marks a batch the tail cache let go of while its bytes
	// existed nowhere else (object durability): they go once uploaded.
	dropOnUpload bool
}

// Partition is one partition's live log. Appends and reads go through its
// mutex; the maintainer owns foldedAt.
type Partition struct {
	topic *Topic
	index int32

	mu lockrank.Mutex[lockrank.Partition] // guards every field below
	// logStart is the first readable offset; hw (high watermark) ends what
	// consumers may read: data below it is durable under the durability
	// mode. next is the offset the next batch gets. committed ends the part
	// of the log committed to the object store.
	logStart, hw, next, committed int64
	// refs holds, in offset order, every batch not yet uploaded plus
	// uploaded batches whose bytes are still cached. refs[firstNew:] are
	// the batches not yet uploaded.
	refs      []*batchRef
	firstNew  int
	producers producers
	waiters   []chan struct{}
	deleted   bool
	// epochs is the leader-epoch history as stored in metadata; the
	// slice is replaced whole at a bump, never changed in place.
	epochs metadata.LeaderEpochs
	// upSent ends the batches handed to an upload (committed or in flight).
	upSent int64
	// offline refuses appends while a reset partition waits to reload
	// (upload_reset.go); resets counts the resets and truncatedAt is where
	// the latest one cut the log, so that a producer waiting for a dropped
	// batch learns it was dropped.
	offline     bool
	resets      int64
	truncatedAt int64
	// truncateErr is what a producer waiting for a batch the latest
	// truncation dropped gets.
	truncateErr error

	// owned says the log serves the partition as its owner (always, on one
	// node); releasing refuses appends while Release waits for the
	// commits; fence is the owner key's condition every metadata write
	// about the partition carries (nil on one node). committedCh is
	// closed at the next commit, truncation or drop (see Release).
	owned, releasing bool
	fence            *metadata.Cond
	committedCh      chan struct{}
	// producersUnread marks, in a cluster, a partition loaded at Open
	// whose producer state was not read: Acquire, or WAL recovery of a
	// batch of it, reads it.
	producersUnread bool

	// replica is what the log knows of the committed log while it does
	// not own the partition (replica.go); it has its own lock.
	replica replicaView

	// foldedAt is the committed offset at the last check whether producer
	// deltas are worth folding, owned by the maintainer goroutine alone.
	foldedAt int64
}

func newPartition(t *Topic, index int32, st metadata.PartitionState) *Partition {
	return &Partition{
		topic:     t,
		index:     index,
		logStart:  st.LogStartOffset,
		hw:        st.NextOffset,
		next:      st.NextOffset,
		committed: st.NextOffset,
		producers: newProducers(),
		epochs:    metadata.InitialLeaderEpochs(),
		owned:     true,
	}
}

// newPartition returns a partition of t as this log starts it: owned on
// one node, not owned in a cluster until Acquire.
func (l *Log) newPartition(t *Topic, index int32, st metadata.PartitionState) *Partition {
	p := newPartition(t, index, st)
	p.owned = l.opts.Ownership == nil
	return p
}

// Topic returns the partition's topic.
func (p *Partition) Topic() *Topic { return p.topic }

// Index returns the partition number.
func (p *Partition) Index() int32 { return p.index }

// Offsets returns the log start offset and high watermark.
func (p *Partition) Offsets() (logStart, hw int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logStart, p.hw
}

func (p *Partition) wakeLocked() {
	for _, ch := range p.waiters {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	p.waiters = p.waiters[:0]
}

// Notify registers ch (buffered, capacity 1) to receive a signal at the next
// high-watermark change or deletion. Registering the same channel twice is a
// no-op; StopNotify removes it.
func (p *Partition) Notify(ch chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.deleted {
		select {
		case ch <- struct{}{}:
		default:
		}
		return
	}
	for _, w := range p.waiters {
		if w == ch {
			return
		}
	}
	p.waiters = append(p.waiters, ch)
}

// StopNotify unregisters ch.
func (p *Partition) StopNotify(ch chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, w := range p.waiters {
		if w == ch {
			p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
			return
		}
	}
}

// waitHW blocks until the high watermark reaches end, the partition is
// deleted or reset (resets moved on from the append's), or ctx ends.
func (p *Partition) waitHW(ctx context.Context, end, resets int64) error {
	ch := make(chan struct{}, 1)
	defer p.StopNotify(ch)
	for {
		p.Notify(ch)
		p.mu.Lock()
		hw, deleted, dropped, cause := p.hw, p.deleted, p.resets != resets && end > p.truncatedAt, p.truncateErr
		p.mu.Unlock()
		switch {
		case deleted:
			return ErrUnknownPartition
		case dropped:
			return cause
		case hw >= end:
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// findLocked returns the index of the first ref whose end is past offset.
func (p *Partition) findLocked(offset int64) int {
	return sort.Search(len(p.refs), func(i int) bool { return p.refs[i].end > offset })
}

// trimLocked drops leading refs that are uploaded and no longer cached.
func (p *Partition) trimLocked() {
	n := 0
	for n < p.firstNew && p.refs[n].data == nil {
		n++
	}
	if n == 0 {
		return
	}
	p.refs = append(p.refs[:0], p.refs[n:]...)
	p.firstNew -= n
}

// evict drops a ref's cached bytes if they can be read elsewhere (the
// object store once uploaded, else the WAL).
func (p *Partition) evict(r *batchRef) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !r.uploaded && !r.hasWAL {
		r.dropOnUpload = true // object durability: the bytes exist nowhere else yet
		return
	}
	r.data = nil
	p.trimLocked()
}
