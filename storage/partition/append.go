package partition

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/record"
	"github.com/sediment-io/sediment/storage/wal"
)

// walBatch is the WAL record type of an appended batch. Its payload is
// topic id [16] | partition int32 BE | the batch as stored (frozen format).
const walBatch wal.RecordType = 1

const walBatchHeader = 20

// AppendResult says where an appended batch landed and how to wait for it.
type AppendResult struct {
	BaseOffset     int64
	LogAppendTime  int64 // -1 unless the topic uses LogAppendTime
	LogStartOffset int64
	Duplicate      bool // a retried batch; BaseOffset is the original's
	durable        durableToken
}

// durableToken is what Wait needs to know an append is durable.
type durableToken struct {
	p      *Partition
	end    int64
	resets int64 // the partition's resets at the append
	walEnd wal.Pos
	hasWAL bool
}

// Append validates one record batch (as sent by a producer) and appends it
// to the partition. The batch slice is rewritten in place (base offset, and
// timestamps for LogAppendTime topics). The append is not yet durable: pass
// the result to Wait before acknowledging it. When uploads are behind, Append
// first waits for room (see waitForRoom), at most until ctx ends.
func (l *Log) Append(ctx context.Context, p *Partition, raw []byte) (AppendResult, error) {
	if l.closed.Load() {
		return AppendResult{}, ErrClosed
	}
	if err := l.checkFailed(); err != nil {
		return AppendResult{}, err
	}
	if err := l.CheckLeader(p); err != nil { // at once, not after waiting for room
		return AppendResult{}, err
	}
	if err := l.waitForRoom(ctx); err != nil {
		return AppendResult{}, err
	}
	b, err := record.ParseBatch(raw)
	if err != nil {
		return AppendResult{}, err
	}
	cfg := p.topic.cfg.Load()
	if len(raw) > cfg.maxBatchBytes {
		return AppendResult{}, fmt.Errorf("%w: %d bytes, max.message.bytes is %d", ErrBatchTooLarge, len(raw), cfg.maxBatchBytes)
	}
	res := AppendResult{LogAppendTime: -1}
	now := l.now().UnixMilli()
	if cfg.logAppendTime {
		res.LogAppendTime = time.Now().UnixMilli()
		record.SetLogAppendTime(raw, res.LogAppendTime)
		b.MaxTimestamp = res.LogAppendTime
	}
	var victims []*batchRef
	defer func() { evictAll(victims) }() // runs after the unlocks below
	l.appendGate.RLock()
	defer l.appendGate.RUnlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.deleted {
		return AppendResult{}, ErrUnknownPartition
	}
	if err := l.leadsLocked(p); err != nil {
		return AppendResult{}, err
	}
	if p.releasing {
		return AppendResult{}, fmt.Errorf("%w: %s/%d is being handed over", ErrNotLeader, p.topic.Name, p.index)
	}
	if p.offline {
		return AppendResult{}, fmt.Errorf("%w: partition %s/%d is reloading after a failed commit", ErrStorage, p.topic.Name, p.index)
	}
	res.LogStartOffset = p.logStart
	dupBase, dup, err := p.producers.check(&b, p.next > 0, now-l.producerExpiration.Load())
	if err != nil {
		return AppendResult{}, err
	}
	if dup {
		res.BaseOffset, res.Duplicate = dupBase, true
		res.durable = durableToken{p: p, end: dupBase + int64(b.NumRecords), resets: p.resets}
		return res, nil
	}
	res, victims, err = l.appendLocked(p, &b, res, now)
	return res, err
}

func evictAll(victims []*batchRef) {
	for _, v := range victims {
		v.part.evict(v)
	}
}

func (l *Log) appendLocked(p *Partition, b *record.Batch, res AppendResult, nowMs int64) (AppendResult, []*batchRef, error) {
	base := p.next
	record.SetBaseOffset(b.Raw, base, p.epochs.Current().Epoch)
	// The cached bytes alias the request frame: the frame is never reused,
	// and its batches leave the FIFO tail cache together.
	ref := &batchRef{part: p, base: base, end: base + int64(b.NumRecords), maxTS: b.MaxTimestamp,
		epoch: p.epochs.Current().Epoch, size: len(b.Raw), data: b.Raw, appendMs: nowMs}
	res.BaseOffset = base
	res.durable = durableToken{p: p, end: ref.end, resets: p.resets}
	if l.opts.Durability == DurabilityWAL {
		l.durable.note(p)
		start, end, err := l.wal.Append(walBatch, walBatchHeaderFor(p.topic.ID, p.index), b.Raw)
		if err != nil {
			return AppendResult{}, nil, fmt.Errorf("%w: %v", ErrStorage, err)
		}
		ref.walPos, ref.walEnd, ref.hasWAL = start, end, true
		res.durable.walEnd, res.durable.hasWAL = end, true
	}
	ref.txn = p.producers.update(b, base, nowMs)
	p.next = ref.end
	p.refs = append(p.refs, ref)
	l.up.markDirty(p, int64(ref.size))
	l.m.appendedBytes.Add(float64(ref.size))
	return res, l.tail.push(ref), nil
}

// waitForRoom applies back-pressure when uploads fall behind: with
// --durability object past MaxPendingBytes of batches held in memory, with
// --durability wal past WALMaxBytes of WAL backlog. It waits for uploads to
// make room until ctx ends, then fails with ErrStorage, which clients retry.
func (l *Log) waitForRoom(ctx context.Context) error {
	var err error
	switch l.opts.Durability {
	case DurabilityObject:
		err = l.up.waitRoom(ctx, func() bool { return l.up.Pending() < l.opts.MaxPendingBytes })
	default:
		err = l.up.waitRoom(ctx, func() bool { return l.wal.Stats().Backlog < l.opts.WALMaxBytes })
	}
	if err != nil {
		return fmt.Errorf("%w: uploads are behind (%d bytes wait for upload, WAL backlog %d bytes): %v",
			ErrStorage, l.up.Pending(), l.wal.Stats().Backlog, err)
	}
	return nil
}

// Wait blocks until the append is durable under the durability mode (and so
// visible to consumers), or ctx ends. In a cluster, an append durable only
// once the broker is past its lease deadline fails with ErrNotLeader: it
// must not be acknowledged (it may still commit, and a retry then finds it
// as a duplicate).
func (l *Log) Wait(ctx context.Context, res AppendResult) error {
	d := res.durable
	if d.p == nil {
		return nil
	}
	if err := l.waitDurable(ctx, d); err != nil {
		return err
	}
	return l.ackable(d.p)
}

// waitDurable is Wait without the lease check.
func (l *Log) waitDurable(ctx context.Context, d durableToken) error {
	if !d.hasWAL {
		return l.waitHW(ctx, d)
	}
	if err := l.wal.Wait(ctx, d.walEnd); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %v", ErrStorage, err)
	}
	d.p.advanceHW(d.end)
	return nil
}

// waitHW waits for d's end to be under the high watermark, which only an
// upload (or the WAL fsync of the batch a duplicate repeats) raises. A
// failed log does neither any more, so its failure ends the wait.
func (l *Log) waitHW(ctx context.Context, d durableToken) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(l.failure.ctx, cancel)
	defer stop()
	err := d.p.waitHW(ctx, d.end, d.resets)
	if ferr := l.checkFailed(); err != nil && ferr != nil {
		return ferr
	}
	return err
}

// walBatchHeaderFor is the part of a WAL batch record before the batch.
func walBatchHeaderFor(id metadata.TopicID, part int32) []byte {
	buf := make([]byte, walBatchHeader)
	copy(buf, id[:])
	binary.BigEndian.PutUint32(buf[16:], uint32(part))
	return buf
}

func decodeWALBatch(payload []byte) (metadata.TopicID, int32, []byte, error) {
	var id metadata.TopicID
	if len(payload) < walBatchHeader+record.BatchHeaderLen {
		return id, 0, nil, fmt.Errorf("partition: WAL batch record of %d bytes is too short", len(payload))
	}
	copy(id[:], payload)
	return id, int32(binary.BigEndian.Uint32(payload[16:])), payload[walBatchHeader:], nil
}
