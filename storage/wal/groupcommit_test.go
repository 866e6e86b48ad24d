package wal

import (
	"context"
	"sync"
	"testing"
)

// TestGroupCommit has 64 writers each appending and waiting in a loop. The
// flusher's fsync is held (by a hook, not by time) until every active
// writer has a frame that is not yet durable, so each fsync, together with
// the next one, covers a frame of every writer: structurally, the number of
// fsyncs is about 2/64 of the appends. A WAL that fsynced once per append
// (or per small batch) would make far more fsyncs and fail.
func TestGroupCommit(t *testing.T) {
	t.Parallel()
	const writers, perWriter, size = 64, 40, 100
	tl, h := newHookLog(t, 1<<30)
	w, _ := tl.open()

	var mu sync.Mutex // guards active; cond signals appends and exits
	cond := sync.NewCond(&mu)
	active := writers
	frameLen := frameSize(size)
	hook := func() {
		mu.Lock()
		defer mu.Unlock()
		for int((w.Head()-w.Durable())/frameLen) < active {
			cond.Wait()
		}
	}
	h.beforeSync.Store(&hook)

	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() { errs <- groupWriter(w, g, perWriter, size, &mu, cond, &active) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	st := w.Stats()
	t.Logf("%d appends, %d fsyncs (%.1f appends per fsync)", st.Appends, st.Syncs, float64(st.Appends)/float64(st.Syncs))
	if st.Appends != writers*perWriter || st.Durable != st.Head {
		t.Fatalf("stats: %+v", st)
	}
	if st.Syncs >= st.Appends/2 {
		t.Fatalf("%d fsyncs for %d appends: no group commit", st.Syncs, st.Appends)
	}
}

// groupWriter appends and waits n times, telling the sync hook after each
// append and when it is done.
func groupWriter(w *WAL, g, n, size int, mu *sync.Mutex, cond *sync.Cond, active *int) error {
	defer func() {
		mu.Lock()
		*active--
		cond.Broadcast()
		mu.Unlock()
	}()
	for i := range n {
		_, end, err := w.Append(RecordType(1+g), payload(g*n+i, size))
		if err != nil {
			return err
		}
		mu.Lock()
		cond.Broadcast()
		mu.Unlock()
		if err := w.Wait(context.Background(), end); err != nil {
			return err
		}
	}
	return nil
}
