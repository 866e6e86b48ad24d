package metadata

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrStorageFailed marks a failed commit of the bbolt file: a write, an
// fsync or the growth of the file failed. bbolt may already serve that
// commit from the page cache while the disk does not hold it (a failed
// fsync leaves the page cache's state unknown), so after one the store
// refuses every later write with it, and its owner should exit and
// restart, as etcd does when its backend cannot commit. A lost
// compare-and-swap (ErrConflict) is never a storage failure.
var ErrStorageFailed = errors.New("metadata: storage failed")

// boltFailure is a Bolt's sticky commit failure: set once, read by anyone.
type boltFailure struct {
	ctx    context.Context // done once a commit failed; its cause is the failure
	cancel context.CancelCauseFunc
	once   sync.Once // the first failure wins
}

func newBoltFailure() *boltFailure {
	f := &boltFailure{}
	f.ctx, f.cancel = context.WithCancelCause(context.Background())
	return f
}

// Failed returns a channel that is closed once a commit of the bbolt file
// failed (see ErrStorageFailed).
func (b *Bolt) Failed() <-chan struct{} { return b.failure.ctx.Done() }

// Failure returns the commit failure, which wraps ErrStorageFailed, or nil
// while the file is healthy.
func (b *Bolt) Failure() error {
	if b.failure.ctx.Err() == nil {
		return nil
	}
	return context.Cause(b.failure.ctx)
}

// fail records that committing failed with err and returns the failure.
func (b *Bolt) fail(err error) error {
	b.failure.once.Do(func() {
		b.failure.cancel(fmt.Errorf("%w: commit to %s failed: %w", ErrStorageFailed, b.db.Path(), err))
	})
	return b.Failure()
}
