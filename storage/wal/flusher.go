package wal

import (
	"fmt"
	"time"
)

// batch is the work of one flush: the encoded frames from start, ending
// with the flush commit at offset commit of buf, and the positions inside
// it where a new segment begins.
type batch struct {
	start  Pos
	buf    *frameBuffer
	commit int
	rolls  []Pos
}

// runFlusher is the flusher goroutine: the group commit loop. Each kick
// means "something is pending"; the flusher takes everything pending at
// once, writes it and fsyncs once for all of it.
func (w *WAL) runFlusher() {
	defer close(w.done)
	for {
		select {
		case <-w.kick:
			w.flush()
		case <-w.stop:
			w.flush() // Close forbids appends first, so this takes the rest
			return
		}
	}
}

// flush writes and fsyncs everything pending, if the log has not failed.
func (w *WAL) flush() {
	b, ok := w.takeBatch()
	if !ok {
		return
	}
	err := w.writeBatch(b)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.failLocked(err)
		return // inflight stays readable
	}
	w.inflight.release()
	w.inflight = nil
}

// takeBatch moves the pending frames to inflight, where ReadAt still finds
// them while they are written.
func (w *WAL) takeBatch() (batch, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil || w.pending.len() == 0 {
		return batch{}, false
	}
	// The commit takes the next position, like an appended frame, so the
	// positions already handed out stay as they are.
	b := batch{start: w.pendingStart, buf: w.pending, commit: w.pending.len(), rolls: w.rolls}
	w.pending.write(commitFrame(w.pendingStart, w.head))
	w.head += commitFrameSize
	w.inflight, w.inflightStart = w.pending, w.pendingStart
	w.pending, w.rolls, w.pendingStart = &frameBuffer{}, nil, w.head
	return b, true
}

// writeBatch writes b, rolling to new segments where b says, fsyncs, and
// then writes the flush commit, which the next fsync makes durable. A
// segment is fsynced before its successor is created, so only the last
// segment can ever hold a torn tail.
func (w *WAL) writeBatch(b batch) error {
	from := 0
	for _, r := range b.rolls {
		to := int(r - b.start)
		if err := b.buf.each(from, to, w.write); err != nil {
			return err
		}
		if err := w.roll(r); err != nil {
			return err
		}
		from = to
	}
	if err := b.buf.each(from, b.commit, w.write); err != nil {
		return err
	}
	d, n, err := w.fsyncActive()
	if err != nil {
		return err
	}
	if err := b.buf.each(b.commit, b.buf.len(), w.write); err != nil {
		return err
	}
	w.published(b.start+Pos(b.buf.len()), d, n)
	return nil
}

// write appends p to the active segment.
func (w *WAL) write(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	n, err := w.act.f.Write(p)
	w.actUnsynced += n
	if err != nil {
		return fmt.Errorf("wal: write %s: %w", w.act.path, err)
	}
	return nil
}

// roll seals the active segment and makes a new one starting at start.
func (w *WAL) roll(start Pos) error {
	if err := w.syncActive(start); err != nil {
		return err
	}
	seg, err := w.sync.createSegment(start)
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.segs = append(w.segs, seg)
	w.mu.Unlock()
	w.act = seg
	return nil
}

// syncActive fsyncs the active segment, whose data ends at upTo, and makes
// upTo durable.
func (w *WAL) syncActive(upTo Pos) error {
	d, n, err := w.fsyncActive()
	if err == nil {
		w.published(upTo, d, n)
	}
	return err
}

// fsyncActive fsyncs the active segment if it has unsynced bytes and
// returns how long it took and how many bytes it covered. It is never
// retried: after a failed fsync the kernel may have dropped the dirty pages
// (fsyncgate), so the caller fails the log.
func (w *WAL) fsyncActive() (time.Duration, int, error) {
	if w.actUnsynced == 0 {
		return 0, 0, nil
	}
	d, err := w.sync.syncFile(w.act.f, w.act.path)
	if err != nil {
		return d, 0, err
	}
	n := w.actUnsynced
	w.actUnsynced = 0
	return d, n, nil
}

// published makes everything before upTo durable for waiters, after an
// fsync of n bytes that took d (none when n is 0). A flush commit counts
// as durable once written: it is the log's own bookkeeping, and losing it
// only turns its flush's damage from corruption into a torn tail.
func (w *WAL) published(upTo Pos, d time.Duration, n int) {
	w.mu.Lock()
	if n > 0 {
		w.syncs++
		w.syncedBytes += uint64(n)
	}
	w.written, w.durable = upTo, upTo
	w.wakeLocked()
	w.mu.Unlock()
	if n > 0 && w.opts.OnSync != nil {
		w.opts.OnSync(d, n)
	}
}
