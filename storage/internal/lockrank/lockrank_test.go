package lockrank

import (
	"strings"
	"testing"
)

// TestInOrder: locks taken in rank order, and released in any order, never
// panic, with or without the tag.
func TestInOrder(t *testing.T) {
	var a Mutex[test1]
	var b RWMutex[test2]
	for range 3 {
		a.Lock()
		b.RLock()
		a.Unlock() // not LIFO
		b.RUnlock()
		a.Lock()
		b.Lock()
		b.Unlock()
		a.Unlock()
	}
}

// TestInversion: with the tag, taking a lower-ranked lock while holding a
// higher one panics and names both locks; without it, nothing is checked.
func TestInversion(t *testing.T) {
	var a Mutex[test1]
	var b Mutex[test2]
	msg := func() (msg string) {
		defer func() {
			if r := recover(); r != nil {
				msg = r.(string)
				return
			}
			a.Unlock()
		}()
		b.Lock()
		defer b.Unlock()
		a.Lock()
		return ""
	}()
	if !Enabled {
		if msg != "" {
			t.Fatalf("panicked without the lockrank tag: %s", msg)
		}
		return
	}
	if !strings.Contains(msg, "lockrank.test1") || !strings.Contains(msg, "lockrank.test2") {
		t.Fatalf("inversion gave %q, want a panic naming both locks", msg)
	}
	// The panicking Lock took nothing: a is free, and b was released.
	if !a.TryLock() {
		t.Fatal("a is held after the panic")
	}
	a.Unlock()
	b.Lock() // no panic: nothing is held any more
	b.Unlock()
}

// TestOtherGoroutines: ranks are per goroutine; a lock held by one
// goroutine does not constrain another.
func TestOtherGoroutines(t *testing.T) {
	var a Mutex[test1]
	var b Mutex[test2]
	b.Lock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Lock()
		a.Unlock()
	}()
	<-done
	b.Unlock()
}
