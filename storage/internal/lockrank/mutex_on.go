//go:build lockrank

package lockrank

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"unsafe"
)

// Enabled reports whether lock ranks are checked (the lockrank build tag).
const Enabled = true

// Mutex is a sync.Mutex of lock class C whose rank is checked.
type Mutex[C Class] struct{ mu sync.Mutex }

// Lock checks the rank, then locks m.
func (m *Mutex[C]) Lock() {
	acquire(unsafe.Pointer(m), rankOf[C]())
	m.mu.Lock()
}

// TryLock locks m if it is free. It cannot deadlock, so it skips the
// check, but a lock it takes counts as held.
func (m *Mutex[C]) TryLock() bool {
	if !m.mu.TryLock() {
		return false
	}
	record(unsafe.Pointer(m), rankOf[C]())
	return true
}

// Unlock unlocks m.
func (m *Mutex[C]) Unlock() {
	release(unsafe.Pointer(m))
	m.mu.Unlock()
}

// RWMutex is a sync.RWMutex of lock class C whose rank is checked; a read
// lock counts as holding it.
type RWMutex[C Class] struct{ mu sync.RWMutex }

// Lock checks the rank, then write-locks m.
func (m *RWMutex[C]) Lock() {
	acquire(unsafe.Pointer(m), rankOf[C]())
	m.mu.Lock()
}

// Unlock write-unlocks m.
func (m *RWMutex[C]) Unlock() {
	release(unsafe.Pointer(m))
	m.mu.Unlock()
}

// RLock checks the rank, then read-locks m.
func (m *RWMutex[C]) RLock() {
	acquire(unsafe.Pointer(m), rankOf[C]())
	m.mu.RLock()
}

// RUnlock read-unlocks m.
func (m *RWMutex[C]) RUnlock() {
	release(unsafe.Pointer(m))
	m.mu.RUnlock()
}

// TryLock write-locks m if it is free.
func (m *RWMutex[C]) TryLock() bool {
	if !m.mu.TryLock() {
		return false
	}
	record(unsafe.Pointer(m), rankOf[C]())
	return true
}

func rankOf[C Class]() Rank {
	var c C
	return c.rank()
}

// held is one lock a goroutine holds.
type held struct {
	lock unsafe.Pointer
	rank Rank
}

var (
	mu      sync.Mutex // guards holding
	holding = map[uint64][]held{}
)

// acquire panics when the calling goroutine holds a lock of rank r or
// above, and otherwise records lock as held. It runs before the caller
// blocks on the lock, so an inversion panics instead of deadlocking.
func acquire(lock unsafe.Pointer, r Rank) {
	g := goid()
	mu.Lock()
	for _, h := range holding[g] {
		if h.rank >= r {
			mu.Unlock()
			panic(fmt.Sprintf("lockrank: goroutine %d takes %s (rank %d) while holding %s (rank %d)",
				g, r, int(r), h.rank, int(h.rank)))
		}
	}
	holding[g] = append(holding[g], held{lock, r})
	mu.Unlock()
}

func record(lock unsafe.Pointer, r Rank) {
	g := goid()
	mu.Lock()
	holding[g] = append(holding[g], held{lock, r})
	mu.Unlock()
}

// release forgets lock: from the calling goroutine's set, or, for a lock
// unlocked by another goroutine than the one that took it (sync allows it),
// from the set of whichever goroutine holds it.
func release(lock unsafe.Pointer) {
	g := goid()
	mu.Lock()
	defer mu.Unlock()
	if forget(g, lock) {
		return
	}
	for other := range holding {
		if forget(other, lock) {
			return
		}
	}
}

func forget(g uint64, lock unsafe.Pointer) bool {
	hs := holding[g]
	for i := len(hs) - 1; i >= 0; i-- {
		if hs[i].lock == lock {
			hs = append(hs[:i], hs[i+1:]...)
			if len(hs) == 0 {
				delete(holding, g)
			} else {
				holding[g] = hs
			}
			return true
		}
	}
	return false
}

// goid returns the calling goroutine's id, parsed from its stack header
// ("goroutine 123 [running]:"): slow, and only ever built with the tag.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		panic("lockrank: cannot parse the goroutine id: " + err.Error())
	}
	return id
}
