package auth

import (
	"container/list"
	"net"
	"sync"
	"time"
)

// ThrottleOptions configures a Throttle; zero fields take the defaults.
type ThrottleOptions struct {
	// Base is the delay after a source's first failure; it doubles with
	// each further one. Default 100ms, Kafka's
	// connection.failed.authentication.delay.ms.
	Base time.Duration
	// Max bounds the delay. Default 5s.
	Max time.Duration
	// Forget is how long after its last failure a source starts afresh.
	// Default 10 minutes.
	Forget time.Duration
	// Sources bounds how many sources are remembered; past it the one
	// whose last failure is oldest is forgotten. Default 10000.
	Sources int
}

// Throttle slows down password guessing: each failed authentication from a
// source (a client address) makes the broker wait longer before it answers
// that source's failure and closes, up to a bound. Memory is bounded by
// the number of sources kept.
type Throttle struct {
	opts ThrottleOptions

	mu      sync.Mutex // guards the fields below
	sources map[string]*list.Element
	order   *list.List // of *throttleEntry, most recent failure first
}

type throttleEntry struct {
	source   string
	failures int
	last     time.Time
}

// NewThrottle returns a Throttle.
func NewThrottle(opts ThrottleOptions) *Throttle {
	if opts.Base <= 0 {
		opts.Base = 100 * time.Millisecond
	}
	if opts.Max <= 0 {
		opts.Max = 5 * time.Second
	}
	opts.Max = max(opts.Max, opts.Base)
	if opts.Forget <= 0 {
		opts.Forget = 10 * time.Minute
	}
	if opts.Sources <= 0 {
		opts.Sources = 10000
	}
	return &Throttle{opts: opts, sources: map[string]*list.Element{}, order: list.New()}
}

// Failure records a failed authentication from source at now and returns
// how long to wait before answering it.
func (t *Throttle) Failure(source string, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.expireLocked(now)
	el, ok := t.sources[source]
	if !ok {
		if t.order.Len() >= t.opts.Sources {
			oldest := t.order.Back()
			delete(t.sources, oldest.Value.(*throttleEntry).source)
			t.order.Remove(oldest)
		}
		el = t.order.PushFront(&throttleEntry{source: source})
		t.sources[source] = el
	}
	e := el.Value.(*throttleEntry)
	e.failures++
	e.last = now
	t.order.MoveToFront(el)
	return t.delay(e.failures)
}

// delay is Base doubled for each failure after the first, capped at Max.
func (t *Throttle) delay(failures int) time.Duration {
	d := t.opts.Base
	for i := 1; i < failures && d < t.opts.Max; i++ {
		d *= 2
	}
	return min(d, t.opts.Max)
}

// Success forgets source's failures.
func (t *Throttle) Success(source string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if el, ok := t.sources[source]; ok {
		delete(t.sources, source)
		t.order.Remove(el)
	}
}

// Len returns how many sources are remembered.
func (t *Throttle) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.order.Len()
}

// expireLocked drops the sources whose last failure is older than Forget.
func (t *Throttle) expireLocked(now time.Time) {
	for el := t.order.Back(); el != nil; el = t.order.Back() {
		e := el.Value.(*throttleEntry)
		if now.Sub(e.last) < t.opts.Forget {
			return
		}
		delete(t.sources, e.source)
		t.order.Remove(el)
	}
}

// Source returns the throttling key of a client address: its host, so
// that new connections from one machine share their failures.
func Source(addr net.Addr) string {
	if addr == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	return host
}
