package groupcommit

import (
	"slices"
	"sync"
	"testing"
)

// TestWriter: items are written in the order they were queued, in
// batches of at most what size allows; Close writes what is still
// queued; after Close, and when admit refuses, Add queues nothing.
func TestWriter(t *testing.T) {
	var mu sync.Mutex
	var written []int
	var batches [][]int
	gate := make(chan struct{})
	first := true
	w := Start("test", func(b []int) int { return min(len(b), 3) }, func(b []int) {
		if first {
			first = false
			<-gate // hold the writer so that the next items queue up together
		}
		mu.Lock()
		defer mu.Unlock()
		written = append(written, b...)
		batches = append(batches, slices.Clone(b))
	})
	for i := range 8 {
		if !w.Add(i, nil) {
			t.Fatalf("Add(%d) refused", i)
		}
	}
	if w.Add(100, func() bool { return false }) {
		t.Fatal("Add with a refusing admit queued the item")
	}
	close(gate)
	w.Close()
	if w.Add(9, nil) {
		t.Fatal("Add after Close queued the item")
	}
	if want := []int{0, 1, 2, 3, 4, 5, 6, 7}; !slices.Equal(written, want) {
		t.Fatalf("written %v, want %v", written, want)
	}
	for _, b := range batches {
		if len(b) == 0 || len(b) > 3 {
			t.Fatalf("batches %v: each must hold 1 to 3 items", batches)
		}
	}
}
