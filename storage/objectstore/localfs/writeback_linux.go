package localfs

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to begin writing [off, off+n) of f to the
// disk, without waiting.
func startWriteback(f *os.File, off, n int64) error {
	if err := unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE); err != nil {
		return fmt.Errorf("sync_file_range: %w", err)
	}
	return nil
}

// awaitWriteback waits until [off, off+n) of f has been written to the
// disk (not flushed from its cache: the final fsync does that). An error
// here may be the only report of a failed write, so the caller fails.
func awaitWriteback(f *os.File, off, n int64) error {
	const flags = unix.SYNC_FILE_RANGE_WAIT_BEFORE | unix.SYNC_FILE_RANGE_WRITE | unix.SYNC_FILE_RANGE_WAIT_AFTER
	if err := unix.SyncFileRange(int(f.Fd()), off, n, flags); err != nil {
		return fmt.Errorf("sync_file_range: %w", err)
	}
	return nil
}
