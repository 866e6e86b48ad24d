package partition

import (
	"context"
	"fmt"
	"time"

	"github.com/sediment-io/sediment/storage/record"
	"github.com/sediment-io/sediment/storage/wal"
)

// openWAL opens the WAL and replays every batch not yet committed to the
// object store into its partition, so the partition's offsets, producer
// state and upload queue are as they were before the crash. Batches of
// deleted topics and batches already committed are skipped.
func (l *Log) openWAL(ctx context.Context) error {
	var replayed, skipped int
	replay := func(pos wal.Pos, typ wal.RecordType, payload []byte) error {
		if typ != walBatch {
			return fmt.Errorf("partition: WAL record at %d has unknown type %d", pos, typ)
		}
		id, idx, raw, err := decodeWALBatch(payload)
		if err != nil {
			return err
		}
		t, ok := l.byID[id]
		p := (*Partition)(nil)
		if ok {
			p = t.Partition(idx)
		}
		if p == nil {
			skipped++
			return nil
		}
		if err := l.loadReplayProducers(ctx, p); err != nil {
			return err
		}
		added, err := l.replayBatch(p, pos, raw)
		if added {
			replayed++
		} else {
			skipped++
		}
		return err
	}
	lost := newRepairLoss(l)
	w, err := wal.Open(wal.Options{
		Dir:          l.opts.WALDir,
		FS:           l.opts.WALFS,
		SegmentBytes: l.opts.WALSegmentBytes,
		Logger:       l.log,
		Repair:       l.opts.WALRepair,
		OnRepairDrop: lost.add,
		OnSync: func(d time.Duration, _ int) {
			l.m.fsyncSeconds.Observe(d.Seconds())
			l.durable.synced()
		},
		OnFail: l.Fail,
	}, replay)
	if err != nil {
		return fmt.Errorf("partition: recover WAL: %w", err)
	}
	l.wal = w
	lost.log()
	l.log.Info("WAL replayed", "batches_recovered", replayed, "batches_skipped", skipped)
	return nil
}

// replayBatch re-adds one recovered batch to p unless it is already in the
// object store.
func (l *Log) replayBatch(p *Partition, pos wal.Pos, raw []byte) (bool, error) {
	if len(raw) < record.BatchHeaderLen {
		return false, fmt.Errorf("partition: WAL batch at %d is truncated", pos)
	}
	b := record.ReadHeader(raw)
	base := record.BaseOffset(raw)
	p.mu.Lock()
	defer p.mu.Unlock()
	if base < p.next {
		return false, nil // committed before the crash
	}
	if base > p.next && l.opts.Ownership != nil {
		// Another owner wrote the partition after this broker's last
		// ownership (a forced takeover, which counted the loss): the
		// batch no longer continues the committed log.
		l.log.Error("WAL batch no longer continues the partition's log, which another owner wrote; skipped",
			"topic", p.topic.Name, "partition", p.index, "offset", base, "log_end", p.next)
		return false, nil
	}
	if base > p.next {
		return false, fmt.Errorf("partition: %s/%d: WAL batch at offset %d but the log ends at %d: data is missing",
			p.topic.Name, p.index, base, p.next)
	}
	// The WAL keeps no append time: a recovered batch counts as seen at
	// recovery, which only lengthens its producer's life by the downtime.
	ref := &batchRef{part: p, base: base, end: base + int64(b.NumRecords), maxTS: b.MaxTimestamp,
		epoch: record.LeaderEpoch(raw), size: len(raw), walPos: pos, hasWAL: true, appendMs: l.now().UnixMilli()}
	ref.txn = p.producers.update(&b, base, ref.appendMs)
	p.next = ref.end
	p.advanceHWLocked(ref.end)
	p.refs = append(p.refs, ref)
	l.up.markDirty(p, int64(ref.size))
	return true, nil
}
