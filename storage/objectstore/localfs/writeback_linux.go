package localfs

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to begin writing [off, off+n) of f to the
// disk, without waiting. It is only a hint: a write that fails is reported
// by awaitWriteback or the final fsync.
func startWriteback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}

// awaitWriteback waits until [off, off+n) of f has been written to the
// disk (not flushed from its cache: the final fsync does that). A write
// error here may be the only report of it (waiting consumes the error the
// fsync would have seen), so it is returned. A file system without
// sync_file_range has nothing to wait for: the final fsync writes all.
func awaitWriteback(f *os.File, off, n int64) error {
	const flags = unix.SYNC_FILE_RANGE_WAIT_BEFORE | unix.SYNC_FILE_RANGE_WRITE | unix.SYNC_FILE_RANGE_WAIT_AFTER
	err := unix.SyncFileRange(int(f.Fd()), off, n, flags)
	if err == nil || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ESPIPE) {
		return nil
	}
	return fmt.Errorf("sync_file_range: %w", err)
}
