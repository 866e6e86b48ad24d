package remote

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// errAttemptTimeout cancels an attempt that ran past its deadline; such an
// attempt is retried.
var errAttemptTimeout = errors.New("attempt timed out")

// attempt is one try of a request: a context that ends at the attempt's
// deadline, which a reader may push back once it knows the body's size.
type attempt struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
	tuning *Tuning
}

func (s *Store) startAttempt(ctx context.Context, body int64) *attempt {
	actx, cancel := context.WithCancelCause(ctx)
	a := &attempt{ctx: actx, cancel: cancel, tuning: &s.tuning}
	a.timer = time.AfterFunc(a.allowance(body), func() { cancel(errAttemptTimeout) })
	return a
}

// allowance is the time an attempt moving body bytes may take.
func (a *attempt) allowance(body int64) time.Duration {
	return a.tuning.RequestTimeout + time.Duration(float64(body)/float64(a.tuning.MinThroughput)*float64(time.Second))
}

// expect restarts the deadline for a body of n bytes still to come.
func (a *attempt) expect(n int64) { a.timer.Reset(a.allowance(max(n, 0))) }

// end releases the attempt and reports whether it ran out of time.
func (a *attempt) end() bool {
	a.timer.Stop()
	timedOut := context.Cause(a.ctx) == errAttemptTimeout
	a.cancel(nil)
	return timedOut
}

// do runs fn, one attempt at a time, until it succeeds, fails with an
// error that is not transient, the attempts run out or ctx ends. body is
// the size of the request body, for the attempt's deadline. It returns the
// number of attempts made and the last error.
func (s *Store) do(ctx context.Context, op string, body int64, fn func(a *attempt) error) (int, error) {
	var err error
	for n := 1; ; n++ {
		if cerr := ctx.Err(); cerr != nil {
			return n - 1, withCtx(cerr, err)
		}
		a := s.startAttempt(ctx, body)
		err = fn(a)
		timedOut := a.end()
		switch {
		case err == nil:
			return n, nil
		case ctx.Err() != nil:
			return n, withCtx(ctx.Err(), err)
		case timedOut:
			err = fmt.Errorf("%w: %w", errAttemptTimeout, err)
		}
		if !s.retriable(err) || n >= s.tuning.MaxAttempts {
			return n, err
		}
		if s.tuning.OnRetry != nil {
			s.tuning.OnRetry(op, err)
		}
		if !sleep(ctx, s.backoff(n)) {
			return n, withCtx(ctx.Err(), err)
		}
	}
}

// backoff is the wait after the n-th failed attempt: exponential, capped,
// with the upper half jittered so that clients that failed together do not
// retry together.
func (s *Store) backoff(n int) time.Duration {
	d := s.tuning.MaxDelay
	if n < 30 {
		d = min(s.tuning.BaseDelay<<(n-1), s.tuning.MaxDelay)
	}
	half := d / 2
	return half + rand.N(half+1)
}

// sleep waits d or until ctx ends, and reports whether it waited.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// withCtx makes sure an error caused by the caller's context wraps that
// context's error.
func withCtx(ctxErr, err error) error {
	switch {
	case err == nil:
		return ctxErr
	case errors.Is(err, ctxErr):
		return err
	}
	return fmt.Errorf("%w: %w", ctxErr, err)
}
