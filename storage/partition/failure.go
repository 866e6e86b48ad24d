package partition

import (
	"context"
	"fmt"
	"sync"
)

// failure is the log's sticky storage failure: set once, read by anyone.
// Setting it never blocks, so the WAL may do so with its own lock held.
type failure struct {
	ctx    context.Context // done once the log failed; its cause is the failure
	cancel context.CancelCauseFunc
	once   sync.Once // the first failure wins
}

func newFailure() *failure {
	f := &failure{}
	f.ctx, f.cancel = context.WithCancelCause(context.Background())
	return f
}

// set records err unless a failure is recorded already, and reports
// whether it did.
func (f *failure) set(err error) (first bool) {
	f.once.Do(func() {
		f.cancel(err)
		first = true
	})
	return first
}

// get returns the failure, or nil while the log is healthy.
func (f *failure) get() error {
	if f.ctx.Err() == nil {
		return nil
	}
	return context.Cause(f.ctx)
}

// Fail fails the log for good with err, which must not be nil (the first
// failure wins): appends
// fail with ErrStorage from then on, and uploads, maintenance and the
// durability notifier stop, so the log writes nothing more. The WAL fails
// the log by itself when a write or fsync fails; the owner calls Fail when
// another storage the log depends on failed the same way (the metadata
// file). After a failed fsync the page cache's state is unknown (the
// PostgreSQL "fsyncgate" lesson), so nothing is retried: the owner closes
// the log and restarts, and WAL recovery decides what survived.
func (l *Log) Fail(err error) {
	if l.failure.set(err) {
		l.stop()
	}
}

// Failed returns a channel that is closed once the log has failed (see
// Fail).
func (l *Log) Failed() <-chan struct{} { return l.failure.ctx.Done() }

// Failure returns the log's storage failure, or nil while it is healthy.
func (l *Log) Failure() error { return l.failure.get() }

// checkFailed returns ErrStorage, with the reason, once the log has failed.
func (l *Log) checkFailed() error {
	if err := l.failure.get(); err != nil {
		return fmt.Errorf("%w: the log failed and takes no more writes: %v", ErrStorage, err)
	}
	return nil
}
