package wal

import (
	"errors"
	"log/slog"
	"time"
)

// Default option values.
const (
	DefaultSegmentBytes = 64 << 20
	DefaultSlowSync     = time.Second
)

// Options configure a WAL. The zero value of every field but Dir is usable.
type Options struct {
	// Dir is the directory holding the segment files (DATA/wal/ in the
	// broker). It is created if missing. Required.
	Dir string
	// FS is the filesystem; nil means the real one (OSFS).
	FS FS
	// SegmentBytes is the logical size at which a segment is rolled: a
	// frame that would make the current, non-empty segment exceed it starts
	// a new one. A single larger frame gets a segment of its own. Flush
	// commits count towards the size but never start a segment, so a
	// segment can end one commit (25 bytes) past it. Default 64 MiB.
	SegmentBytes int64
	// SlowSync is the fsync duration above which a sync is logged at Warn.
	// Default 1s.
	SlowSync time.Duration
	// Logger receives recovery and slow-sync reports; nil means
	// slog.Default().
	Logger *slog.Logger
	// OnSync, if set, is called by the flusher after every segment fsync
	// with its duration and the number of bytes it made durable. It must
	// not block and must not call back into the WAL.
	OnSync func(d time.Duration, bytes int)
	// OnFail, if set, is called once, by the flusher, when the log fails
	// for good (a write or fsync error; see Err), with the failure. After a
	// failed fsync the page cache's state is unknown, so the owner should
	// stop writing and restart from recovery rather than retry. It is
	// called with the log's lock held: it must not block and must not call
	// back into the WAL. When nil, the failure is logged at Error instead;
	// when set, reporting it is the owner's job, so it is said once.
	OnFail func(err error)
	// Repair, when true, makes Open cut the log at a corrupt frame or
	// segment (deleting everything after it, logged at Error) instead of
	// failing with a *CorruptionError. Acknowledged data is lost and the
	// positions after the cut are handed out again: only for an operator
	// who asked for it.
	Repair bool
	// OnRepairDrop, if set, is called during a repairing Open for every
	// frame of the part cut off that is still intact, in log order, so the
	// caller can say what was lost. Frames inside damage cannot be found
	// and are not reported. The payload is valid only during the call.
	OnRepairDrop func(pos Pos, typ RecordType, payload []byte) error
}

// withDefaults validates o and fills in defaults.
func (o Options) withDefaults() (Options, error) {
	switch {
	case o.Dir == "":
		return o, errors.New("wal: options: Dir is required")
	case o.SegmentBytes < 0:
		return o, errors.New("wal: options: SegmentBytes must not be negative")
	case o.SlowSync < 0:
		return o, errors.New("wal: options: SlowSync must not be negative")
	}
	if o.FS == nil {
		o.FS = OSFS{}
	}
	if o.SegmentBytes == 0 {
		o.SegmentBytes = DefaultSegmentBytes
	}
	if o.SlowSync == 0 {
		o.SlowSync = DefaultSlowSync
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o, nil
}
