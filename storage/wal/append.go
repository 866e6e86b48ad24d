package wal

import (
	"context"
	"errors"
	"fmt"
)

// Append copies payload (the concatenation of its parts, so callers need not
// build one buffer) into the pending buffer and returns the frame's start and
// end positions. It never waits for I/O; Wait(ctx, end) waits
// for durability. Appends are totally ordered: a later Append gets a larger
// Pos. After the log has failed (a write or fsync error) Append returns
// that sticky error; after Close it returns ErrClosed.
func (w *WAL) Append(typ RecordType, payload ...[]byte) (start, end Pos, err error) {
	if typ == 0 {
		return 0, 0, errors.New("wal: append: record type 0 is reserved")
	}
	n := 0
	for _, p := range payload {
		n += len(p)
	}
	if n > MaxPayload {
		return 0, 0, fmt.Errorf("wal: append: payload of %d bytes exceeds MaxPayload", n)
	}
	crc := frameCRC(typ, payload...) // outside the lock: it depends on nothing shared
	w.mu.Lock()
	start, end, err = w.appendLocked(crc, typ, n, payload)
	w.mu.Unlock()
	if err == nil {
		w.kickFlusher()
	}
	return start, end, err
}

func (w *WAL) appendLocked(crc uint32, typ RecordType, n int, payload [][]byte) (start, end Pos, err error) {
	switch {
	case w.err != nil:
		return 0, 0, w.err
	case w.closing:
		return 0, 0, ErrClosed
	}
	start, end = w.head, w.head+frameSize(n)
	// Segment boundaries are decided here, so that positions are final the
	// moment Append returns; the flusher creates the files.
	if used := int64(start - w.tailStart); used > 0 && used+int64(end-start) > w.opts.SegmentBytes {
		w.rolls = append(w.rolls, start)
		w.tailStart = start
	}
	w.pending.appendFrame(crc, typ, n, payload...)
	w.head = end
	w.appends++
	return start, end, nil
}

// kickFlusher wakes the flusher without ever blocking: one pending kick is
// enough, since the flusher takes everything pending when it wakes.
func (w *WAL) kickFlusher() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Wait blocks until everything before end is fsynced (nil), the log failed
// (its sticky error), the log is closed (ErrClosed) or ctx is done
// (ctx.Err()). end is normally the end returned by Append.
func (w *WAL) Wait(ctx context.Context, end Pos) error {
	for {
		w.mu.Lock()
		ch, err := w.waitStateLocked(end)
		w.mu.Unlock()
		if ch == nil {
			return err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// waitStateLocked returns the outcome of waiting for end, or a nil outcome
// and the channel to wait on for the next change.
func (w *WAL) waitStateLocked(end Pos) (<-chan struct{}, error) {
	switch {
	case w.durable >= end:
		return nil, nil
	case w.err != nil:
		return nil, w.err
	case w.closed:
		return nil, ErrClosed
	case end > w.head:
		return nil, fmt.Errorf("wal: wait for pos %d beyond head %d", end, w.head)
	}
	return w.changed, nil
}

// Sync kicks the flusher and waits until everything appended so far is
// fsynced.
func (w *WAL) Sync(ctx context.Context) error {
	head := w.Head()
	w.kickFlusher()
	return w.Wait(ctx, head)
}
