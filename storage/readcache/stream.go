package readcache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/sediment-io/sediment/storage/internal/lockrank"
	"github.com/sediment-io/sediment/storage/objectstore"
)

// Sequential readers of compacted segments read through streams: one
// ranged GET from where the reader is to the end of the object, read ahead
// by a goroutine a few chunks at a time, kept between fetches under the
// position of its next byte. The next fetch of that reader continues the
// same request. A catch-up reader of a 64 MiB segment then makes one GET
// for it instead of one per block, and the streams of all the partitions a
// consumer reads fill at the same time while the fetch that serves them
// copies one partition after another. The block cache stays the path for
// the multi-partition upload objects, whose blocks many readers share, and
// for compacted segments when every stream is taken.

// streamIdle is the default of Options.StreamIdleTimeout: how long an
// unused stream stays open.
const streamIdle = 30 * time.Second

// chunkBytes is the default of Options.ChunkBytes: the unit a stream reads
// ahead in.
const chunkBytes = 1 << 20

// streamStall is the default of Options.StreamStallTimeout: how long one
// chunk may take before the stream is abandoned (the reader falls back to
// the block cache, which retries).
const streamStall = 30 * time.Second

// errStreamStalled ends a stream whose store stopped sending.
var errStreamStalled = errors.New("readcache: object stream stalled")

// streamKey names an idle stream: its object and the position of its next
// byte.
type streamKey struct {
	object string
	pos    int64
}

// segStream is one open stream. Only the reader holding it (taken from the
// table) touches pos, pending and eof.
type segStream struct {
	object  string
	pos     int64            // object position of the next byte read returns
	pending spans            // received, not yet returned; never written into
	eof     bool             // the object ends after pending
	chunks  chan streamChunk // closed when the filling goroutine ends
	ctx     context.Context  // the filling goroutine's; its cause says why it ended early
	stop    context.CancelCauseFunc
	done    chan struct{} // closed when the filling goroutine has ended
	used    time.Time
	stall   time.Duration // abandon the stream when a chunk takes longer
	chunk   int           // bytes read ahead at a time
}

// streamChunk is a piece of the body, or the error (io.EOF at the end)
// that ended it.
type streamChunk struct {
	data []byte
	err  error
}

// fill reads the body ahead of the reader until the object ends, the
// stream is stopped or the store stalls.
func (s *segStream) fill(ctx context.Context, body io.ReadCloser) {
	defer close(s.done)
	defer close(s.chunks)
	defer body.Close()
	unblock := context.AfterFunc(ctx, func() { body.Close() })
	defer unblock()
	for {
		buf := make([]byte, s.chunk)
		stall := time.AfterFunc(s.stall, func() { s.stop(errStreamStalled) })
		n, err := io.ReadFull(body, buf)
		stall.Stop()
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = io.EOF
		}
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		if n > 0 {
			select {
			case s.chunks <- streamChunk{data: buf[:n]}:
			case <-ctx.Done():
				return
			}
		}
		if err != nil {
			select {
			case s.chunks <- streamChunk{err: err}:
			case <-ctx.Done():
			}
			return
		}
	}
}

// read returns the next n bytes, fewer if the object ends first, in the
// chunks they arrived in.
func (s *segStream) read(ctx context.Context, n int64) (spans, error) {
	var out spans
	for got := int64(0); got < n; {
		if len(s.pending) == 0 {
			if s.eof {
				break
			}
			select {
			case c, ok := <-s.chunks:
				if !ok { // stopped (stalled) before it could say so
					return nil, fmt.Errorf("readcache: object %s at %d: stream ended: %w", s.object, s.pos+got, context.Cause(s.ctx))
				}
				if errors.Is(c.err, io.EOF) {
					s.eof = true
					continue
				}
				if c.err != nil {
					return nil, fmt.Errorf("readcache: object %s at %d: %w", s.object, s.pos+got, c.err)
				}
				s.pending = append(s.pending, c.data)
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		b := s.pending[0]
		k := min(int64(len(b)), n-got)
		out = append(out, b[:k])
		if s.pending[0] = b[k:]; len(s.pending[0]) == 0 {
			s.pending = s.pending[1:]
		}
		got += k
	}
	s.pos += out.size()
	return out, nil
}

// unread puts back the tail of what read returned last.
func (s *segStream) unread(tail spans) {
	if n := tail.size(); n > 0 {
		s.pending = append(append(spans(nil), tail...), s.pending...)
		s.pos -= n
	}
}

// streamTable holds the open streams, at most max of them, idle or taken.
type streamTable struct {
	store objectstore.Store
	max   int
	ahead int // chunks a stream reads ahead
	chunk int // bytes of one chunk
	got   func(error)
	// idleAfter closes an unused stream; stall abandons one whose store
	// sends nothing for that long.
	idleAfter, stall time.Duration

	mu      lockrank.Mutex[lockrank.Streams] // guards idle, opening, open and closed
	idle    map[streamKey]*segStream
	opening map[streamKey]chan struct{} // warm's opens in flight; closed when done
	warmed  int                         // streams warm opened (for tests)
	open    int
	closed  bool
	warms   sync.WaitGroup
	// ctx bounds warm's opens: close cancels it, so a store that hangs
	// cannot hold up shutdown.
	ctx    context.Context
	cancel context.CancelFunc
	// onOpen, when set, is called (without mu) after a stream is counted
	// open: the block cache gives back the memory the stream now holds.
	onOpen func()
}

// streamBytes is the most one stream holds: its chunks read ahead and the
// one being filled.
func (t *streamTable) streamBytes() int64 { return int64(t.ahead+1) * int64(t.chunk) }

// spare is the memory of the streams that are not open.
func (t *streamTable) spare() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return int64(max(t.max-t.open, 0)) * t.streamBytes()
}

func (t *streamTable) opened() {
	if t.onOpen != nil {
		t.onOpen()
	}
}

func newStreamTable(o *Options) *streamTable {
	ctx, cancel := context.WithCancel(context.Background())
	return &streamTable{store: o.Store, max: o.Streams, ahead: int(max(o.StreamReadahead/int64(o.ChunkBytes), 1)),
		chunk: o.ChunkBytes, got: o.Got, idleAfter: o.StreamIdleTimeout, stall: o.StreamStallTimeout,
		idle: map[streamKey]*segStream{}, opening: map[streamKey]chan struct{}{}, ctx: ctx, cancel: cancel}
}

// take returns the idle stream of object whose next byte is pos, or opens
// one there. It returns nil when every stream is taken (the caller reads
// through the block cache instead).
func (t *streamTable) take(ctx context.Context, object string, pos int64) (*segStream, error) {
	k := streamKey{object, pos}
	t.mu.Lock()
	if wait, ok := t.opening[k]; ok { // warm is opening it: wait for that
		t.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		t.mu.Lock()
	}
	if s, ok := t.idle[k]; ok {
		delete(t.idle, k)
		t.mu.Unlock()
		return s, nil
	}
	if t.closed || (t.open >= t.max && !t.evictLocked()) {
		t.mu.Unlock()
		return nil, nil
	}
	t.open++
	t.mu.Unlock()
	t.opened()
	s, err := t.openStream(ctx, object, pos)
	if err != nil {
		t.mu.Lock()
		t.open--
		t.mu.Unlock()
	}
	return s, err
}

// openStream makes the GET of a new stream and starts filling it.
func (t *streamTable) openStream(ctx context.Context, object string, pos int64) (*segStream, error) {
	body, err := t.store.OpenRange(ctx, object, pos, 1<<62)
	t.got(err)
	if err != nil {
		return nil, err
	}
	fctx, stop := context.WithCancelCause(context.Background())
	s := &segStream{object: object, pos: pos, chunks: make(chan streamChunk, t.ahead), ctx: fctx, stop: stop, done: make(chan struct{}),
		stall: t.stall, chunk: t.chunk}
	go s.fill(fctx, body)
	return s, nil
}

// discard closes the idle stream of object standing at pos, if any: one
// at the end of what its reader will read of it.
func (t *streamTable) discard(object string, pos int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.idle[streamKey{object, pos}]; ok {
		delete(t.idle, streamKey{object, pos})
		t.closeLocked(s)
	}
}

// warm opens a stream at pos of object in the background and leaves it
// idle there, for the reader about to need it: a partition's reader at the
// end of one segment object warms the next, so that its next fetch finds
// the GET answered and data read ahead instead of waiting for the first
// byte. It does nothing when a stream is there or on its way, or when
// every stream is in use (a warm stream never pushes out another).
func (t *streamTable) warm(object string, pos int64) {
	k := streamKey{object, pos}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.idle[k]; ok || t.closed || t.open >= t.max || t.opening[k] != nil {
		return
	}
	t.open++
	done := make(chan struct{})
	t.opening[k] = done
	t.warms.Add(1)
	go func() {
		defer t.warms.Done()
		t.opened()
		ctx, cancel := context.WithTimeout(t.ctx, t.stall)
		s, err := t.openStream(ctx, object, pos)
		cancel()
		t.mu.Lock()
		defer t.mu.Unlock()
		delete(t.opening, k)
		close(done)
		switch {
		case err != nil:
			t.open--
		case t.closed || t.idle[k] != nil:
			t.closeLocked(s)
		default:
			s.used = time.Now()
			t.warmed++
			t.idle[k] = s
		}
	}()
}

// put returns a stream to the table, idle under its new position; one at
// the end of its object is closed instead.
func (t *streamTable) put(s *segStream) {
	if s.eof && len(s.pending) == 0 {
		t.drop(s)
		return
	}
	s.used = time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		t.closeLocked(s)
		return
	}
	k := streamKey{s.object, s.pos}
	if old, ok := t.idle[k]; ok { // another reader left one at the same place
		t.closeLocked(old)
	}
	t.idle[k] = s
}

// drop closes a taken stream that broke or is no longer wanted.
func (t *streamTable) drop(s *segStream) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closeLocked(s)
}

func (t *streamTable) closeLocked(s *segStream) {
	s.stop(context.Canceled)
	t.open--
}

// evictLocked closes the least recently used idle stream to make room,
// and reports whether there was one.
func (t *streamTable) evictLocked() bool {
	var oldest *segStream
	for _, s := range t.idle {
		if oldest == nil || s.used.Before(oldest.used) {
			oldest = s
		}
	}
	if oldest == nil {
		return false
	}
	delete(t.idle, streamKey{oldest.object, oldest.pos})
	t.closeLocked(oldest)
	return true
}

// sweep closes the streams idle for longer than idleAfter.
func (t *streamTable) sweep(now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, s := range t.idle {
		if now.Sub(s.used) > t.idleAfter {
			delete(t.idle, k)
			t.closeLocked(s)
		}
	}
}

// close closes every idle stream and makes the table refuse new ones; a
// taken stream is closed when it comes back.
func (t *streamTable) close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.cancel()
	t.warms.Wait() // a warm finishing meanwhile sees closed and closes its stream
	t.mu.Lock()
	var idle []*segStream
	for k, s := range t.idle {
		delete(t.idle, k)
		t.closeLocked(s)
		idle = append(idle, s)
	}
	t.mu.Unlock()
	for _, s := range idle {
		<-s.done
	}
}
