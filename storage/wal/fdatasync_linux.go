package wal

import "syscall"

// Sync implements File with fdatasync(2): it makes the written data and the
// metadata needed to read it back (the file size) durable, skipping
// timestamps. The WAL only appends, and a new segment's directory entry is
// made durable by its own directory fsync, so this is all it needs; etcd's
// WAL does the same.
func (f osFile) Sync() error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
