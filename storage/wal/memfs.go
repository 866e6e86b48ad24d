package wal

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"sync"
)

// ErrCrashed is returned by every operation on a MemFS file handle opened
// before the last Crash: the process that held it is considered dead.
var ErrCrashed = errors.New("memfs: handle invalidated by crash")

// MemFS is an in-memory FS for tests, in this package and others. It keeps,
// for every file, the bytes written and the bytes last made durable by
// Sync, and for every directory the set of names last made durable by
// SyncDir. Crash throws away everything not durable, like a power cut: file
// contents revert to their last Sync, and creates, renames and removes that
// no SyncDir covered are undone. Directories themselves are durable as soon
// as MkdirAll returns (a simplification). A Sync that fails (FailNextSync)
// makes nothing durable, and nothing is retried: the dirty bytes stay dirty.
// It is safe for concurrent use.
type MemFS struct {
	mu        sync.Mutex           // guards every field below and all memInode contents
	files     map[string]*memInode // the namespace as processes see it
	durable   map[string]*memInode // the namespace a crash would leave
	dirs      map[string]bool      // directories created by MkdirAll
	gen       uint64               // bumped by Crash; older handles are dead
	failWrite error                // returned once by the next File.Write
	failSync  error                // returned once by the next File.Sync or SyncDir
}

// memInode is one file's contents.
type memInode struct {
	data   []byte // what reads see
	synced []byte // what a crash leaves
	// clean is the length of the common prefix of data and synced that is
	// known to be equal, so Sync copies only what changed.
	clean int
}

var _ FS = (*MemFS)(nil)

// NewMemFS returns an empty MemFS.
func NewMemFS() *MemFS {
	return &MemFS{
		files:   make(map[string]*memInode),
		durable: make(map[string]*memInode),
		dirs:    make(map[string]bool),
	}
}

// Create implements FS.
func (m *MemFS) Create(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = filepath.Clean(name)
	if !m.dirs[filepath.Dir(name)] {
		return nil, pathErr("create", name, iofs.ErrNotExist)
	}
	ino := m.files[name]
	if ino == nil {
		ino = &memInode{}
		m.files[name] = ino
	}
	ino.truncateLocked(0)
	return m.handleLocked(name, ino, true), nil
}

// OpenFile implements FS.
func (m *MemFS) OpenFile(name string) (File, error) { return m.open("open", name, true) }

// Open implements FS.
func (m *MemFS) Open(name string) (File, error) { return m.open("open", name, false) }

func (m *MemFS) open(op, name string, writable bool) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = filepath.Clean(name)
	ino := m.files[name]
	if ino == nil {
		return nil, pathErr(op, name, iofs.ErrNotExist)
	}
	return m.handleLocked(name, ino, writable), nil
}

func (m *MemFS) handleLocked(name string, ino *memInode, writable bool) *memFile {
	return &memFile{fs: m, name: name, ino: ino, gen: m.gen, writable: writable}
}

// Rename implements FS.
func (m *MemFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	oldname, newname = filepath.Clean(oldname), filepath.Clean(newname)
	ino := m.files[oldname]
	if ino == nil {
		return &iofs.PathError{Op: "rename", Path: oldname, Err: iofs.ErrNotExist}
	}
	delete(m.files, oldname)
	m.files[newname] = ino
	return nil
}

// Remove implements FS.
func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = filepath.Clean(name)
	if m.files[name] == nil {
		return pathErr("remove", name, iofs.ErrNotExist)
	}
	delete(m.files, name)
	return nil
}

// ReadDir implements FS.
func (m *MemFS) ReadDir(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir = filepath.Clean(dir)
	if !m.dirs[dir] {
		return nil, pathErr("readdir", dir, iofs.ErrNotExist)
	}
	var names []string
	for name := range m.files {
		if filepath.Dir(name) == dir {
			names = append(names, filepath.Base(name))
		}
	}
	sort.Strings(names)
	return names, nil
}

// MkdirAll implements FS.
func (m *MemFS) MkdirAll(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for d := filepath.Clean(dir); !m.dirs[d]; d = filepath.Dir(d) {
		m.dirs[d] = true
	}
	return nil
}

// SyncDir implements FS: the current entries of dir become durable.
func (m *MemFS) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.takeFailSyncLocked(); err != nil {
		return err
	}
	dir = filepath.Clean(dir)
	for name := range m.durable {
		if filepath.Dir(name) == dir && m.files[name] == nil {
			delete(m.durable, name)
		}
	}
	for name, ino := range m.files {
		if filepath.Dir(name) == dir {
			m.durable[name] = ino
		}
	}
	return nil
}

// Stat implements FS.
func (m *MemFS) Stat(name string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ino := m.files[filepath.Clean(name)]
	if ino == nil {
		return 0, pathErr("stat", name, iofs.ErrNotExist)
	}
	return int64(len(ino.data)), nil
}

func pathErr(op, name string, err error) error {
	return &iofs.PathError{Op: op, Path: name, Err: err}
}

func (m *MemFS) takeFailSyncLocked() error {
	err := m.failSync
	m.failSync = nil
	return err
}

// FailNextWrite makes the next File.Write on any file return err without
// writing anything.
func (m *MemFS) FailNextWrite(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failWrite = err
}

// FailNextSync makes the next File.Sync or SyncDir return err without
// making anything durable.
func (m *MemFS) FailNextSync(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failSync = err
}

// Crash simulates a power cut: every file reverts to its last synced
// contents, the namespace reverts to what SyncDir made durable, pending
// failures are cleared and all open handles die (ErrCrashed).
func (m *MemFS) Crash() {
	m.CrashTorn(func(string, int) int { return 0 })
}

// CrashTorn is Crash, except that for a file whose unsynced change is pure
// growth (bytes appended after its synced contents), keep(name, n) chooses
// how many of those n unsynced bytes survive: a torn write. keep's result
// is clamped to [0, n].
func (m *MemFS) CrashTorn(keep func(name string, unsynced int) int) {
	m.crash(keep, nil)
}

// CrashBlocks is a power cut after which the kernel had written back a
// random part of each file's unsynced pages, in no particular order: for a
// file whose unsynced change is pure growth, the file keeps a random length
// of it, and each blockSize-aligned block of the kept unsynced bytes
// survives with probability keepPercent/100 and reads as zeros otherwise.
// So a hole can be followed by data written after it. Everything else is as
// for Crash. rng makes it reproducible.
func (m *MemFS) CrashBlocks(rng *rand.Rand, blockSize, keepPercent int) {
	keep := func(_ string, n int) int { return rng.IntN(n + 1) }
	holes := func(data []byte, from int) {
		for b := from - from%blockSize; b < len(data); b += blockSize {
			if rng.IntN(100) >= keepPercent {
				clear(data[max(b, from):min(b+blockSize, len(data))])
			}
		}
	}
	m.crash(keep, holes)
}

// crash reverts every durable file, keeping keep(name, n) of n unsynced
// grown bytes, and lets holes (which may be nil) zero parts of the file
// from offset from, where the kept unsynced bytes begin.
func (m *MemFS) crash(keep func(name string, unsynced int) int, holes func(data []byte, from int)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	m.failWrite, m.failSync = nil, nil
	m.files = make(map[string]*memInode, len(m.durable))
	names := make([]string, 0, len(m.durable))
	for name := range m.durable {
		names = append(names, name)
	}
	sort.Strings(names) // a seeded crash must not depend on map order
	for _, name := range names {
		ino := m.durable[name]
		ino.crashLocked(func(n int) int { return min(max(keep(name, n), 0), n) }, holes)
		m.files[name] = ino
	}
}

// Kill simulates the death of the process, not of the machine: every open
// handle dies (ErrCrashed) and pending failures are cleared, but nothing
// written is lost, as the page cache survives.
func (m *MemFS) Kill() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	m.failWrite, m.failSync = nil, nil
}

// Bytes returns a copy of the current contents of name.
func (m *MemFS) Bytes(name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ino := m.files[filepath.Clean(name)]
	if ino == nil {
		return nil, pathErr("read", name, iofs.ErrNotExist)
	}
	return append([]byte(nil), ino.data...), nil
}

// SetBytes replaces (or creates) name with data, durably, as if the file
// had been found so on disk after a reboot. Its directory is created too.
// Tests use it to tear a tail or flip a byte.
func (m *MemFS) SetBytes(name string, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = filepath.Clean(name)
	for d := filepath.Dir(name); !m.dirs[d]; d = filepath.Dir(d) {
		m.dirs[d] = true
	}
	ino := m.files[name]
	if ino == nil {
		ino = &memInode{}
	}
	ino.data = append([]byte(nil), data...)
	ino.synced = append([]byte(nil), data...)
	ino.clean = len(data)
	m.files[name] = ino
	m.durable[name] = ino
}

// String lists the files and their sizes, for test failure messages.
func (m *MemFS) String() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	names := make([]string, 0, len(m.files))
	for name := range m.files {
		names = append(names, name)
	}
	sort.Strings(names)
	s := "memfs{"
	for _, name := range names {
		s += fmt.Sprintf(" %s:%d", name, len(m.files[name].data))
	}
	return s + " }"
}
