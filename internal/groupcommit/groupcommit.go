// Package groupcommit is the queue of a group-commit writer: callers
// queue changes without blocking, and one goroutine takes everything
// queued at once and writes it in batches that each fit one metadata
// transaction, so that many changes pending together cost one write.
// The coordinators' persisters (groupcoord, txncoord) are built on it.
package groupcommit

import (
	"context"
	"runtime/pprof"
	"sync"
)

// Writer queues items and writes them on its own goroutine.
type Writer[T any] struct {
	size  func(batch []T) int // how many items at the head of batch fit one write
	write func(batch []T)

	mu     sync.Mutex // guards queue and closed
	queue  []T
	closed bool

	kick chan struct{} // one slot: there is work
	done chan struct{} // closed when run returns
}

// Start starts a writer whose goroutine is labelled label in profiles.
// size returns how many items at the head of a batch fit one write (at
// least one); write writes them, in the order they were queued.
func Start[T any](label string, size func(batch []T) int, write func(batch []T)) *Writer[T] {
	w := &Writer[T]{size: size, write: write, kick: make(chan struct{}, 1), done: make(chan struct{})}
	go pprof.Do(context.Background(), pprof.Labels("sediment", label), func(context.Context) {
		defer close(w.done)
		w.run()
	})
	return w
}

// Add queues item and returns true, unless the writer is closed or admit
// (nil: none) refuses it; admit runs under the writer's lock, so that an
// item it lets in is queued before anything added after it decides. Add
// never blocks and never calls write.
func (w *Writer[T]) Add(item T, admit func() bool) bool {
	w.mu.Lock()
	if w.closed || (admit != nil && !admit()) {
		w.mu.Unlock()
		return false
	}
	w.queue = append(w.queue, item)
	w.mu.Unlock()
	w.wake()
	return true
}

// Close writes what is queued and stops the goroutine.
func (w *Writer[T]) Close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.wake()
	<-w.done
}

func (w *Writer[T]) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// take removes and returns everything queued, and whether the writer is
// closed.
func (w *Writer[T]) take() ([]T, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	q := w.queue
	w.queue = nil
	return q, w.closed
}

func (w *Writer[T]) run() {
	for range w.kick {
		for {
			batch, closed := w.take()
			if len(batch) == 0 {
				if closed {
					return
				}
				break
			}
			for len(batch) > 0 {
				n := max(w.size(batch), 1)
				w.write(batch[:n])
				batch = batch[n:]
			}
		}
	}
}
