package wal

import (
	"context"
	"errors"
	"fmt"
	"runtime/pprof"
	"sync"
)

// WAL is an open write-ahead log. Its methods are safe for concurrent use.
//
// Ownership: the flusher goroutine owns the active segment's writes
// (act, actUnsynced); mu guards the shared state that Append, Wait, ReadAt,
// Release and the flusher exchange.
type WAL struct {
	opts      Options
	sync      syncer
	kick      chan struct{} // one slot: "there is work", sent by Append and Sync
	stop      chan struct{} // closed by Close: flush what is left and exit
	done      chan struct{} // closed by the flusher when it exits
	closeOnce sync.Once
	closeErr  error      // result of the one Close, set inside closeOnce
	releaseMu walRelease // serializes Release, so segments are deleted oldest first

	act         *segment // segment the flusher appends to; flusher-owned
	actUnsynced int      // bytes written to act since its last fsync; flusher-owned

	mu            walMutex      // guards every field below
	head          Pos           // end of the last appended frame
	written       Pos           // everything before it is in segment files
	durable       Pos           // everything before it is fsynced
	tailStart     Pos           // start of the newest segment, created or only planned
	pending       *frameBuffer  // encoded frames not yet taken by the flusher
	pendingStart  Pos           // position of pending[0]; equals head when pending is empty
	rolls         []Pos         // starts of planned segments not yet taken by the flusher, ascending
	inflight      *frameBuffer  // frames being written by the flusher (kept after a failure)
	inflightStart Pos           // position of inflight[0]
	segs          []*segment    // segment files, oldest first; the last is the active one
	released      Pos           // highest Release argument so far
	err           error         // sticky failure of a write or fsync
	closing       bool          // Close has begun: no more appends
	closed        bool          // Close has finished: files are closed
	changed       chan struct{} // closed and replaced when durable, err or closed change
	appends       uint64        // frames appended since Open
	syncs         uint64        // segment fsyncs done by the flusher
	syncedBytes   uint64        // bytes made durable by those fsyncs
}

// Stats is a snapshot of the log's counters.
type Stats struct {
	Head        Pos    // end of the last appended frame
	Durable     Pos    // everything before it is fsynced
	Backlog     int64  // Head minus the released position: bytes still needed
	Retained    int64  // Head minus the start of the oldest retained segment: bytes on disk
	Pending     int64  // bytes appended but not yet written to a file
	Segments    int    // segment files on disk
	Appends     uint64 // frames appended since Open
	Syncs       uint64 // segment fsyncs by the flusher since Open
	SyncedBytes uint64 // bytes made durable by those fsyncs
}

// Open recovers the log in opts.Dir and starts the flusher goroutine.
//
// replay (may be nil) is called, in log order, for every valid frame still
// on disk, with the frame's start position; the payload slice is valid only
// during the call. If replay returns an error, Open fails with it wrapped.
// If Open fails, frames already replayed must be discarded by the caller.
//
// Damage after the last flush commit of the last segment is a torn tail,
// never acknowledged: it is truncated and fsynced, and the file, offset and
// dropped byte count are logged once. Any other damage is corruption: Open
// returns a *CorruptionError naming the file and offset, unless
// opts.Repair. See the package doc for version 1 segments.
func Open(opts Options, replay func(pos Pos, typ RecordType, payload []byte) error) (*WAL, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := opts.FS.MkdirAll(opts.Dir); err != nil {
		return nil, fmt.Errorf("wal: create directory %s: %w", opts.Dir, err)
	}
	sy := syncer{fs: opts.FS, dir: opts.Dir, slow: opts.SlowSync, log: opts.Logger}
	r := &recoverer{fs: opts.FS, dir: opts.Dir, repair: opts.Repair, log: opts.Logger, sync: sy,
		replay: replay, drop: opts.OnRepairDrop}
	segs, head, err := r.run()
	if err != nil {
		return nil, err
	}
	w := &WAL{
		opts: opts, sync: sy,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		act:  segs[len(segs)-1],
		head: head, written: head, durable: head, pendingStart: head, pending: &frameBuffer{},
		tailStart: segs[len(segs)-1].start,
		segs:      segs,
		changed:   make(chan struct{}),
	}
	opts.Logger.Info("wal: opened", "dir", opts.Dir, "segments", len(segs),
		"first", segs[0].start, "head", head)
	labels := pprof.Labels("component", "wal-flusher", "dir", opts.Dir)
	go pprof.Do(context.Background(), labels, func(context.Context) { w.runFlusher() })
	return w, nil
}

// Head returns the end of the last appended frame.
func (w *WAL) Head() Pos {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.head
}

// Durable returns the position before which everything is fsynced.
func (w *WAL) Durable() Pos {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.durable
}

// Stats returns a snapshot of the log's counters.
func (w *WAL) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return Stats{
		Head:        w.head,
		Durable:     w.durable,
		Backlog:     int64(w.head - max(w.released, w.segs[0].start)),
		Retained:    int64(w.head - w.segs[0].start),
		Pending:     int64(w.head - w.written),
		Segments:    len(w.segs),
		Appends:     w.appends,
		Syncs:       w.syncs,
		SyncedBytes: w.syncedBytes,
	}
}

// Close flushes and fsyncs everything pending, stops the flusher and
// closes the files. It returns the log's sticky failure, if any, joined
// with close errors. It is idempotent: later calls return the same result.
func (w *WAL) Close() error {
	w.closeOnce.Do(func() { w.closeErr = w.shutdown() })
	return w.closeErr
}

func (w *WAL) shutdown() error {
	w.mu.Lock()
	w.closing = true
	w.mu.Unlock()
	close(w.stop)
	<-w.done

	// The flusher is gone, so act is ours: make the last flush commit
	// durable, so that a clean shutdown leaves every flush provable.
	w.mu.Lock()
	failed := w.err != nil
	w.mu.Unlock()
	var syncErr error
	if !failed {
		_, _, syncErr = w.fsyncActive()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	w.wakeLocked()
	errs := []error{w.err, syncErr}
	for _, seg := range w.segs {
		if err := seg.f.Close(); err != nil {
			errs = append(errs, fmt.Errorf("wal: close %s: %w", seg.path, err))
		}
	}
	return errors.Join(errs...)
}

// wakeLocked wakes every Wait so it rechecks durable, err and closed.
func (w *WAL) wakeLocked() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// failLocked makes err the log's sticky failure (the first one wins),
// tells the owner and wakes every waiter.
func (w *WAL) failLocked(err error) {
	if w.err == nil {
		w.err = err
		if w.opts.OnFail != nil {
			w.opts.OnFail(err)
		} else {
			w.opts.Logger.Error("wal: log failed; no more appends", "dir", w.opts.Dir, "err", err)
		}
	}
	w.wakeLocked()
}

// Err returns the log's sticky failure: nil while it is healthy, and for
// good once a write or fsync failed. A failed log takes no more appends
// and writes nothing more; what was durable before stays readable.
func (w *WAL) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
