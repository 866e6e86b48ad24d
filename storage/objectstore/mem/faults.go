package mem

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Op names a kind of store call, for fault injection and counting.
type Op int

// The kinds of call. OpAny stands for every kind: a fault injected for OpAny
// hits every call, and Count(OpAny) is the number of calls of all kinds.
// OpGetRange covers both GetRange and OpenRange.
const (
	OpGet Op = iota
	OpGetRange
	OpPut
	OpStat
	OpList
	OpDelete
	OpAny
	numOps
)

var opNames = [numOps]string{"get", "get range", "put", "stat", "list", "delete", "any"}

// String returns the call's name as error messages spell it.
func (op Op) String() string {
	if op < 0 || op >= numOps {
		return "unknown op"
	}
	return opNames[op]
}

// ErrInjected is the error FailNext injects when given a nil error.
var ErrInjected = errors.New("mem: injected failure")

// ErrDown is what every call returns while the store is down (SetDown). It
// reads like the 503 an S3 endpoint answers during an outage, which callers
// are expected to retry.
var ErrDown = errors.New("mem: 503 service unavailable (store is down, injected)")

// failure is a pending FailNext: the next left calls fail with err.
type failure struct {
	left int
	err  error
}

// faults holds the injected faults of one Store.
type faults struct {
	calls [numOps]atomic.Int64 // calls made, per op; OpAny counts all

	mu      sync.Mutex // guards every field below
	fail    [numOps]failure
	hang    [numOps]bool
	unhang  chan struct{} // closed by Unhang to release hung calls
	latency time.Duration
	down    bool
	onPut   func(key string)
}

func (f *faults) init() { f.unhang = make(chan struct{}) }

// FailNext makes the next n calls of op (of any kind for OpAny) fail with
// err, or with ErrInjected when err is nil. It replaces an earlier FailNext
// for the same op; n <= 0 cancels it. A call matching both its own op and
// OpAny consumes its own op's failure first.
func (s *Store) FailNext(op Op, n int, err error) {
	if err == nil {
		err = ErrInjected
	}
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.fail[op] = failure{left: max(n, 0), err: err}
}

// Hang makes every later call of op (of any kind for OpAny) block until its
// context ends, when it fails with the context's error, or until Unhang or
// Close.
func (s *Store) Hang(op Op) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.hang[op] = true
}

// Unhang lifts every Hang and releases the calls blocked by one.
func (s *Store) Unhang() {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	close(s.faults.unhang)
	s.faults.unhang = make(chan struct{})
	s.faults.hang = [numOps]bool{}
}

// SetLatency delays every later call by d before it does anything; a call
// whose context ends first fails with the context's error. Zero removes it.
func (s *Store) SetLatency(d time.Duration) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.latency = d
}

// SetDown switches an outage on or off: while down, every call fails with
// ErrDown and changes nothing.
func (s *Store) SetDown(down bool) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.down = down
}

// OnPut sets a hook called with the key after every successful Put, before
// Put returns: a test can record the put or simulate a crash right after it.
// A nil fn removes the hook. The hook runs with no lock held.
func (s *Store) OnPut(fn func(key string)) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.onPut = fn
}

// Count returns how many calls of op (of every kind for OpAny) were made,
// including those that failed.
func (s *Store) Count(op Op) int64 { return s.faults.calls[op].Load() }

func (f *faults) putHook() func(string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.onPut
}
