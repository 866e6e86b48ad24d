package partition

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/wal"
)

// commitLanded commits, in upload order, every object at the head of the
// queue whose PUT landed and whose commit is due, and releases the WAL
// behind them. It stops at the first object not landed or not committed:
// the commits behind it wait, so a partition's segments stay contiguous.
func (u *uploader) commitLanded(ctx context.Context) error {
	committed := false
	var err error
	for len(u.queue) > 0 && err == nil {
		f := u.queue[0]
		if !f.landed() || !f.retryAt.IsZero() && time.Now().Before(f.retryAt) {
			break
		}
		if f.putAt.IsZero() {
			f.putAt = time.Now()
			if u.l.opts.AfterPut != nil {
				u.l.opts.AfterPut(f.key)
			}
		}
		if err = u.commitHead(ctx, f); err != nil {
			f.retryAt = time.Now().Add(u.l.opts.UploadRetryDelay)
			break
		}
		u.queue = u.queue[1:]
		u.inflight -= f.up.bytes
		u.setInFlight(f.key, false)
		if len(u.free) < u.l.opts.UploadConcurrency {
			u.free = append(u.free, f.obj[:0])
		}
		committed = true
	}
	if committed {
		if rerr := u.releaseWAL(ctx); err == nil {
			err = rerr
		}
		u.signalRoom()
	}
	return err
}

// commitHead commits the object at the head of the queue. A commit whose
// earlier attempt failed without a definite answer is settled first by
// asking metadata whether the object is indexed: it is never uploaded
// again. A partition whose segment cannot commit (ErrOffsetGap) is taken
// out of the object and reset (see resetPartition); the rest commit.
func (u *uploader) commitHead(ctx context.Context, f *flight) error {
	for range len(f.up.parts) + 1 { // each round takes a partition out, or ends
		if f.uncertain {
			known, err := u.l.meta.ObjectKnown(ctx, f.key)
			if err != nil {
				return fmt.Errorf("partition: settle the commit of object %s: %w", f.key, err)
			}
			if known {
				u.l.log.Warn("object commit had applied although it reported an error", "key", f.key)
				u.finish(f)
				return nil
			}
			f.uncertain = false
		}
		if len(f.up.parts) == 0 {
			u.dropObject(ctx, f.key)
			return nil
		}
		err := u.commit(ctx, f)
		var gap *metadata.GapError
		var notOwner *metadata.NotOwnerError
		switch {
		case err == nil:
			u.finish(f)
			return nil
		case errors.As(err, &notOwner):
			u.dropNotOwned(notOwner)
		case errors.As(err, &gap):
			// The gap may be this object's own earlier attempt, applied
			// after it was settled as not applied (a remote store's late
			// write): read back before taking any partition out.
			known, kerr := u.l.meta.ObjectKnown(ctx, f.key)
			if kerr != nil {
				return fmt.Errorf("partition: settle the gap of object %s: %w", f.key, kerr)
			}
			if known {
				u.l.log.Warn("object commit had applied late; its gap is its own", "key", f.key)
				u.finish(f)
				return nil
			}
			u.reject(ctx, gap, err)
		case errors.Is(err, metadata.ErrObjectSwept):
			// Another sweeper claimed the object (this broker's spares the
			// objects it has in flight): it can never be committed, so the
			// same bytes go up again under a new key.
			u.rekey(ctx, f)
			return err
		default:
			f.uncertain = !metadata.IsConflict(err) && !errors.Is(err, metadata.ErrTooManyRetries)
			return err
		}
	}
	return fmt.Errorf("partition: commit object %s: no partition left to take out", f.key)
}

// rekey PUTs a flight's object again under a new key.
func (u *uploader) rekey(ctx context.Context, f *flight) {
	old := f.key
	f.key = u.objectKey()
	u.setInFlight(f.key, true)
	u.setInFlight(old, false)
	f.putAt, f.uncertain = time.Time{}, false
	u.l.log.Warn("object was swept as an orphan before its commit; uploading it again", "key", old, "new_key", f.key)
	u.startPut(ctx, f)
}

// commit records the object's segments in metadata, each with the
// producers that wrote in it (the segment's producer delta).
func (u *uploader) commit(ctx context.Context, f *flight) error {
	up := f.up
	commits := make([]metadata.SegmentCommit, len(f.entries))
	for i, e := range f.entries {
		commits[i] = metadata.SegmentCommit{
			Segment: metadata.Segment{Topic: e.Topic, Partition: e.Partition, BaseOffset: e.BaseOffset,
				EndOffset: e.EndOffset, Object: f.key, Pos: e.Pos, Len: e.Len, MaxTimestamp: e.MaxTimestamp},
			Producers: up.producers[i],
			Fence:     up.fences[i],
		}
	}
	if _, err := u.l.meta.CommitSegments(ctx, commits); err != nil {
		return fmt.Errorf("partition: commit object %s: %w", f.key, err)
	}
	return nil
}

// dropObject deletes an object none of whose partitions could commit. A
// failure leaves it to the orphan sweep.
func (u *uploader) dropObject(ctx context.Context, key string) {
	err := u.l.store.Delete(ctx, key)
	u.l.m.objectOps.WithLabelValues("delete", resultLabel(err)).Inc()
	u.l.log.Warn("object left with no partition to commit; deleted", "key", key, "err", err)
}

// finish marks the committed batches uploaded, advances each partition's
// committed offset (and with it the high watermark) and updates the
// accounting.
func (u *uploader) finish(f *flight) {
	up := f.up
	var n int64
	for i, p := range up.parts {
		if p.markUploaded(up.refs[i]) {
			continue // deleted meanwhile: markDeleted already forgot these bytes
		}
		for _, r := range up.refs[i] {
			n += int64(r.size)
		}
	}
	u.mu.Lock()
	u.shrinkLocked(n)
	u.mu.Unlock()
	u.l.m.uploadSeconds.Observe(time.Since(f.start).Seconds())
	u.l.m.uploadedBytes.Add(float64(len(f.obj)))
}

// markUploaded reports whether the partition had been deleted, in which
// case markDeleted counted refs as forgotten already.
func (p *Partition) markUploaded(refs []*batchRef) (deleted bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	deleted = p.deleted
	for _, r := range refs {
		r.uploaded = true
		if r.dropOnUpload {
			r.data = nil
		}
	}
	p.firstNew += len(refs)
	p.committed = refs[len(refs)-1].end
	p.advanceHWLocked(p.committed)
	p.signalCommitLocked()
	p.trimLocked()
	return deleted
}

// releaseWAL frees WAL space before the first batch still waiting for
// upload (or before the latest cut when nothing waits), then brings back
// the partitions reset before the released point. Called with step held.
func (u *uploader) releaseWAL(ctx context.Context) error {
	if u.l.wal == nil {
		return nil
	}
	u.mu.Lock()
	parts := make([]*Partition, 0, len(u.dirty))
	for p := range u.dirty {
		parts = append(parts, p)
	}
	u.mu.Unlock()
	for _, f := range u.queue {
		parts = append(parts, f.up.parts...)
	}
	pos := u.lastCut
	for _, p := range parts {
		if first, ok := p.firstNewWALPos(); ok && first < pos {
			pos = first
		}
	}
	if err := u.l.wal.Release(pos); err != nil {
		return fmt.Errorf("partition: release WAL to %d: %w", pos, err)
	}
	return u.reopenReset(ctx, pos)
}

func (p *Partition) firstNewWALPos() (wal.Pos, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.deleted || p.firstNew >= len(p.refs) || !p.refs[p.firstNew].hasWAL {
		return 0, false
	}
	return p.refs[p.firstNew].walPos, true
}
