package wal

import (
	"errors"
	"fmt"
)

// ErrClosed is returned by operations on a closed (or closing) WAL.
var ErrClosed = errors.New("wal: closed")

// ErrReleased is returned (wrapped) by ReadAt for a position whose segment
// has been deleted by Release.
var ErrReleased = errors.New("wal: position released")

// CorruptionError says that acknowledged data on disk is damaged: a bad
// frame or segment header that is not a torn tail, or a gap between
// segments. Open returns it unless Options.Repair is set.
type CorruptionError struct {
	File   string // path of the segment file, as given to the FS
	Offset int64  // file offset of the bad frame or header
	Reason string // what is wrong, e.g. "bad CRC"
}

// Error says which file and offset are corrupt and why.
func (e *CorruptionError) Error() string {
	what := "frame"
	if e.Offset < segmentHeaderSize {
		what = "header"
	}
	return fmt.Sprintf("wal: corrupt %s in segment %s at offset %d: %s", what, e.File, e.Offset, e.Reason)
}

// IsCorruption reports whether err is (or wraps) a *CorruptionError.
func IsCorruption(err error) bool {
	var ce *CorruptionError
	return errors.As(err, &ce)
}
