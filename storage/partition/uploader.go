package partition

import (
	"context"
	"fmt"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/sediment-io/sediment/storage/internal/lockrank"
	"github.com/sediment-io/sediment/storage/wal"
)

// uploader moves appended batches to the object store: every upload
// interval, or once upload-bytes are waiting, it writes ONE object holding
// the new batches of every partition that has any, commits the object's
// index to metadata, and releases the WAL space behind it. The number of
// PUTs therefore never grows with the number of partitions.
//
// Uploads are pipelined: up to UploadConcurrency objects are PUT at once,
// and their commits apply strictly in the order the objects were cut, so a
// partition's segments stay contiguous. An object whose PUT failed holds
// back the commits behind it and is PUT again under the same key; an
// object whose commit failed is committed again, never re-uploaded (see
// commitHead). The store owns retries of one request; the uploader only
// loops.
type uploader struct {
	l       *Log
	kick    chan struct{} // one slot: wakes run early
	putKick chan struct{} // one slot: a PUT ended
	puts    sync.WaitGroup

	// step is held by whoever moves the pipeline on (the uploader
	// goroutine, Close's final flush, a test's cycle); it guards queue,
	// inflight, offline, free and every partition's upSent.
	step     sync.Mutex
	queue    []*flight // cut and not yet committed, in upload order
	inflight int64     // bytes of batches in queue
	offline  []offlinePartition
	free     [][]byte // buffers of committed objects, for the next ones
	lastCut  wal.Pos  // WAL head at the latest cut

	keysMu sync.Mutex          // guards keys
	keys   map[string]struct{} // keys of the objects in queue

	mu      lockrank.Mutex[lockrank.Uploader] // guards dirty, pending, room and drops
	dirty   map[*Partition]struct{}
	pending int64         // bytes appended and not yet committed
	room    chan struct{} // closed and replaced whenever pending shrinks
	drops   []*Partition  // dropped while a step ran; the next step applies them
}

func newUploader(l *Log) *uploader {
	return &uploader{l: l, kick: make(chan struct{}, 1), putKick: make(chan struct{}, 1),
		dirty: map[*Partition]struct{}{}, room: make(chan struct{}), keys: map[string]struct{}{}}
}

// markDirty notes that p has n new bytes to upload. Called with p.mu held.
func (u *uploader) markDirty(p *Partition, n int64) {
	u.mu.Lock()
	u.dirty[p] = struct{}{}
	u.pending += n
	full := u.pending >= u.l.opts.UploadBytes
	u.mu.Unlock()
	if full {
		signal(u.kick)
	}
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// forget drops n bytes of a deleted partition from the pending count.
func (u *uploader) forget(n int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.shrinkLocked(n)
}

func (u *uploader) shrinkLocked(n int64) {
	u.pending -= n
	close(u.room)
	u.room = make(chan struct{})
}

// signalRoom wakes appends waiting for room (the WAL was released).
func (u *uploader) signalRoom() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.shrinkLocked(0)
}

// waitRoom blocks until ok() holds, re-checking whenever an upload makes
// room, until ctx ends. It kicks the uploader while it waits.
func (u *uploader) waitRoom(ctx context.Context, ok func() bool) error {
	for {
		u.mu.Lock()
		room := u.room
		u.mu.Unlock()
		if ok() {
			return nil
		}
		signal(u.kick)
		select {
		case <-room:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Pending returns the bytes waiting for upload.
func (u *uploader) Pending() int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.pending
}

// unsentLocked returns the bytes appended and in no object yet. Called with
// step held.
func (u *uploader) unsentLocked() int64 { return max(u.Pending()-u.inflight, 0) }

func (u *uploader) run(ctx context.Context) {
	pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("sediment", "uploader")))
	defer u.puts.Wait() // every PUT started here ends with ctx
	t := time.NewTicker(u.l.opts.UploadInterval)
	defer t.Stop()
	due := false
	for {
		var retry time.Time
		retry, due = u.advance(ctx, due)
		var retryC <-chan time.Time
		var rt *time.Timer
		if !retry.IsZero() {
			rt = time.NewTimer(time.Until(retry))
			retryC = rt.C
		}
		select {
		case <-ctx.Done():
			return // Close's final flush commits what is left
		case <-t.C:
			due = true
		case <-u.kick: // upload-bytes wait, or an append waits for room
			due = true
		case <-u.putKick:
		case <-retryC:
		}
		if rt != nil {
			rt.Stop()
		}
	}
}

// advance moves the pipeline on as far as it can without waiting: commits
// the objects at its head whose PUT landed, PUTs again the failed ones
// whose retry time came, and cuts new objects while there is room and data
// is due (the interval passed, or upload-bytes wait). It returns when the
// next retry is due (zero: none waits), and whether a cut is still due
// because the pipeline was full.
func (u *uploader) advance(ctx context.Context, due bool) (time.Time, bool) {
	u.step.Lock()
	defer u.step.Unlock()
	u.applyDrops()
	if err := u.commitLanded(ctx); err != nil && ctx.Err() == nil {
		u.l.log.Error("upload commit failed; retrying the commit", "err", err)
	}
	u.retryPuts(ctx, false)
	for len(u.queue) < u.l.opts.UploadConcurrency && (due || u.unsentLocked() >= u.l.opts.UploadBytes) {
		started, err := u.cut(ctx)
		if err != nil && ctx.Err() == nil {
			u.l.log.Error("upload failed; retrying", "err", err)
		}
		if !started {
			due = false
			break
		}
		due = false
	}
	return u.nextRetry(), due
}

// cycle is one synchronous round, for the final flush and for tests: cut an
// object of what waits (if the pipeline has room), PUT again every object
// whose PUT failed, wait for every PUT in flight and commit in order as far
// as they landed. It reports whether more is waiting, and the first error.
func (u *uploader) cycle(ctx context.Context) (more bool, err error) {
	u.step.Lock()
	defer u.step.Unlock()
	u.applyDrops()
	if len(u.queue) < u.l.opts.UploadConcurrency {
		_, err = u.cut(ctx)
	}
	u.retryPuts(ctx, true)
	for _, f := range u.queue {
		select {
		case <-f.done:
		case <-ctx.Done():
			return true, ctx.Err()
		}
	}
	for _, f := range u.queue {
		f.retryAt = time.Time{} // retry now
	}
	if cerr := u.commitLanded(ctx); err == nil {
		err = cerr
	}
	if err == nil && len(u.queue) > 0 && u.queue[0].failed() {
		err = u.queue[0].putErr
	}
	return len(u.queue) > 0 || u.unsentLocked() >= u.l.opts.UploadBytes, err
}

// flushAll uploads until nothing is pending, bounded by FlushTimeout. A
// failed round is tried again after UploadRetryDelay.
func (u *uploader) flushAll(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, u.l.opts.FlushTimeout)
	defer u.puts.Wait()
	defer cancel()
	var last error
	for {
		more, err := u.cycle(ctx)
		if err == nil && (!more && u.Pending() == 0 || u.l.opts.Ownership != nil && u.settled()) {
			return nil
		}
		if err != nil {
			last = err
			sleepCtx(ctx, u.l.opts.UploadRetryDelay)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("partition: final upload: %w with %d bytes pending (last error: %v)", ctx.Err(), u.Pending(), last)
		}
	}
}

// settled reports, in a cluster, whether nothing this log may upload is
// left: no object in flight and no owned partition with batches in none.
// The batches of partitions it does not own (kept under wal durability)
// stay in the WAL for their next ownership.
func (u *uploader) settled() bool {
	u.step.Lock()
	defer u.step.Unlock()
	if len(u.queue) > 0 {
		return false
	}
	u.mu.Lock()
	parts := make([]*Partition, 0, len(u.dirty))
	for p := range u.dirty {
		parts = append(parts, p)
	}
	u.mu.Unlock()
	for _, p := range parts {
		if p.ownsUnsent() {
			return false
		}
	}
	return true
}

// ownsUnsent reports whether p is owned and has batches in no object.
func (p *Partition) ownsUnsent() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.owned && !p.deleted && p.firstUnsentLocked() < len(p.refs)
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
