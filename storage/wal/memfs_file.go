package wal

import (
	"errors"
	"io"
	iofs "io/fs"
)

// memFile is a handle on a MemFS inode. Its fields are immutable except
// closed, which like the inode is guarded by fs.mu.
type memFile struct {
	fs       *MemFS
	name     string
	ino      *memInode
	gen      uint64 // MemFS generation the handle was opened in
	writable bool
	closed   bool
}

var _ File = (*memFile)(nil)

// usableLocked returns why the handle cannot be used, or nil.
func (f *memFile) usableLocked(op string, write bool) error {
	switch {
	case f.closed:
		return pathErr(op, f.name, iofs.ErrClosed)
	case f.gen != f.fs.gen:
		return pathErr(op, f.name, ErrCrashed)
	case write && !f.writable:
		return pathErr(op, f.name, errors.New("file opened read-only"))
	}
	return nil
}

// ReadAt implements io.ReaderAt with the semantics of os.File.
func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usableLocked("read", false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("read", f.name, errors.New("negative offset"))
	}
	if off >= int64(len(f.ino.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.ino.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Write implements File.
func (f *memFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usableLocked("write", true); err != nil {
		return 0, err
	}
	if err := f.fs.failWrite; err != nil {
		f.fs.failWrite = nil
		return 0, pathErr("write", f.name, err)
	}
	f.ino.data = append(grow(f.ino.data, len(p)), p...)
	return len(p), nil
}

// Sync implements File.
func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usableLocked("sync", false); err != nil {
		return err
	}
	if err := f.fs.takeFailSyncLocked(); err != nil {
		return pathErr("sync", f.name, err)
	}
	f.ino.syncLocked()
	return nil
}

// Truncate implements File.
func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usableLocked("truncate", true); err != nil {
		return err
	}
	if size < 0 {
		return pathErr("truncate", f.name, errors.New("negative size"))
	}
	f.ino.truncateLocked(int(size))
	return nil
}

// Size implements File.
func (f *memFile) Size() (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usableLocked("stat", false); err != nil {
		return 0, err
	}
	return int64(len(f.ino.data)), nil
}

// Close implements File.
func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return pathErr("close", f.name, iofs.ErrClosed)
	}
	f.closed = true
	return nil
}

// syncLocked makes data durable, copying only the bytes past the clean
// prefix. The MemFS lock must be held, as for every memInode method.
func (ino *memInode) syncLocked() {
	dirty := ino.data[ino.clean:]
	ino.synced = append(grow(ino.synced[:ino.clean], len(dirty)), dirty...)
	ino.clean = len(ino.data)
}

// truncateLocked cuts or zero-extends data to size.
func (ino *memInode) truncateLocked(size int) {
	if size <= len(ino.data) {
		ino.data = ino.data[:size]
	} else {
		ino.data = append(ino.data, make([]byte, size-len(ino.data))...)
	}
	ino.clean = min(ino.clean, size)
}

// crashLocked reverts data to synced, keeping keep(n) of n unsynced
// appended bytes when the unsynced change is pure growth, and lets holes
// (if not nil) zero some of those kept bytes.
func (ino *memInode) crashLocked(keep func(n int) int, holes func(data []byte, from int)) {
	kept := 0
	if grown := len(ino.data) - len(ino.synced); grown > 0 && ino.clean >= len(ino.synced) {
		kept = keep(grown)
	}
	data := make([]byte, len(ino.synced)+kept)
	copy(data, ino.synced)
	copy(data[len(ino.synced):], ino.data[len(ino.synced):len(ino.synced)+kept])
	if holes != nil && kept > 0 {
		holes(data, len(ino.synced))
	}
	ino.data = data
	ino.synced = append([]byte(nil), data...)
	ino.clean = len(data)
}

// grow makes room for n more bytes, doubling: append alone grows big
// slices by only a quarter, which makes large files quadratic to build.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	nb := make([]byte, len(b), 2*cap(b)+n)
	copy(nb, b)
	return nb
}
