package partition

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/sediment-io/sediment/storage/dataobject"
	"github.com/sediment-io/sediment/storage/objectstore"
)

// flight is one cut object on its way: PUT (perhaps again), then committed.
// The step holder owns every field; done and putErr hand over the result of
// the PUT goroutine.
type flight struct {
	up      *upload
	key     string
	obj     []byte
	entries []dataobject.Entry
	start   time.Time // when the object was cut
	putAt   time.Time // when the uploader first saw its PUT landed (zero: not yet)

	done   chan struct{} // closed when the PUT started last has ended
	putErr error         // that PUT's result, set before done closes

	retryAt time.Time // the next PUT or commit is not due before this
	// uncertain is set once a commit attempt failed without a definite
	// answer: the next attempt first asks metadata whether it applied.
	uncertain bool
}

// landed reports whether the flight's object is stored.
func (f *flight) landed() bool {
	select {
	case <-f.done:
		return f.putErr == nil
	default:
		return false
	}
}

// failed reports whether the flight's last PUT ended with an error.
func (f *flight) failed() bool {
	select {
	case <-f.done:
		return f.putErr != nil
	default:
		return false
	}
}

// startPut PUTs the flight's object in its own goroutine.
func (u *uploader) startPut(ctx context.Context, f *flight) {
	done := make(chan struct{})
	f.done, f.putErr = done, nil
	u.puts.Add(1)
	go func() {
		defer u.puts.Done()
		err := u.put(ctx, f.key, f.obj)
		f.putErr = err
		close(done)
		signal(u.putKick)
	}()
}

// retryPuts PUTs again every object whose PUT failed and whose retry is due
// (all of them when now is set), under the same key: a PUT that did land
// unseen is then recognised instead of leaving an orphan behind.
func (u *uploader) retryPuts(ctx context.Context, now bool) {
	for _, f := range u.queue {
		if !f.failed() {
			continue
		}
		if f.retryAt.IsZero() {
			u.l.log.Warn("object put failed; retrying", "key", f.key, "err", f.putErr)
			f.retryAt = time.Now().Add(u.l.opts.UploadRetryDelay)
		}
		if now || !time.Now().Before(f.retryAt) {
			f.retryAt = time.Time{}
			u.startPut(ctx, f)
		}
	}
}

// nextRetry returns when the earliest waiting retry is due (zero: none).
func (u *uploader) nextRetry() time.Time {
	var next time.Time
	for _, f := range u.queue {
		if !f.retryAt.IsZero() && (next.IsZero() || f.retryAt.Before(next)) {
			next = f.retryAt
		}
	}
	return next
}

// put writes the object once; the store retries transient failures of the
// request within its own deadlines.
func (u *uploader) put(ctx context.Context, key string, obj []byte) error {
	_, err := u.l.store.Put(ctx, key, obj, objectstore.Condition{IfAbsent: true})
	u.l.m.objectOps.WithLabelValues("put", resultLabel(err)).Inc()
	if err == nil || objectstore.IsPrecondition(err) && u.landedBefore(ctx, key, obj) {
		return nil
	}
	return fmt.Errorf("partition: put object %s: %w", key, err)
}

// landedBefore reports whether key already holds obj: a PUT again whose
// earlier attempt succeeded but whose answer was lost fails its
// If-None-Match. Rare, so it compares the bytes themselves (ETags differ by
// backend).
func (u *uploader) landedBefore(ctx context.Context, key string, obj []byte) bool {
	got, err := u.l.store.Get(ctx, key)
	return err == nil && bytes.Equal(got, obj)
}

func resultLabel(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// setInFlight adds key to, or removes it from, the keys of objects cut and
// not yet committed.
func (u *uploader) setInFlight(key string, on bool) {
	u.keysMu.Lock()
	defer u.keysMu.Unlock()
	if on {
		u.keys[key] = struct{}{}
	} else {
		delete(u.keys, key)
	}
}

// inFlight reports whether key is an object this broker cut and has not
// committed yet: the orphan sweep leaves it alone however old it is, since
// its commit may still come (a metadata outage longer than the orphan
// grace).
func (u *uploader) inFlight(key string) bool {
	u.keysMu.Lock()
	defer u.keysMu.Unlock()
	_, ok := u.keys[key]
	return ok
}
