package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// statusErr is an error that carries a response, as the SDKs' do.
type statusErr struct {
	status int
	code   string
}

func (e statusErr) Error() string { return fmt.Sprintf("HTTP %d %s", e.status, e.code) }

// statusWire is a Wire whose only working method is Status; the retry
// loop and the classification are tested through it.
type statusWire struct{ Wire }

func (statusWire) Status(err error) (int, string) {
	var se statusErr
	if errors.As(err, &se) {
		return se.status, se.code
	}
	return 0, ""
}

func newTestStore(t *testing.T, tuning Tuning) *Store {
	t.Helper()
	s, err := New(Config{Name: "test", Bucket: "b", Tuning: tuning}, statusWire{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRetriable(t *testing.T) {
	s := newTestStore(t, Tuning{})
	for _, c := range []struct {
		err  error
		want bool
	}{
		{statusErr{503, "ServiceUnavailable"}, true},
		{statusErr{500, "InternalError"}, true},
		{statusErr{429, ""}, true},
		{statusErr{400, "RequestTimeout"}, true},
		{statusErr{409, "ConditionalRequestConflict"}, true},
		{statusErr{503, "SlowDown"}, true},
		{statusErr{412, "PreconditionFailed"}, false},
		{statusErr{404, "NoSuchKey"}, false},
		{statusErr{403, "SignatureDoesNotMatch"}, false},
		{statusErr{416, "InvalidRange"}, false},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{fmt.Errorf("body: %w", io.ErrUnexpectedEOF), true},
		{&net.OpError{Op: "read", Err: errors.New("broken")}, true},
		{fmt.Errorf("%w: x", errAttemptTimeout), true},
		{errors.New("some client-side problem"), false},
	} {
		if got := s.retriable(c.err); got != c.want {
			t.Errorf("retriable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestFailSentinels(t *testing.T) {
	s := newTestStore(t, Tuning{})
	for _, c := range []struct {
		err   error
		write bool
		want  error
	}{
		{statusErr{404, "NoSuchKey"}, false, objectstore.ErrNotExist},
		{statusErr{404, "NoSuchKey"}, true, objectstore.ErrPrecondition},
		{statusErr{412, "PreconditionFailed"}, true, objectstore.ErrPrecondition},
		{statusErr{416, "InvalidRange"}, false, objectstore.ErrInvalidRange},
	} {
		if err := s.fail("op", "k", c.err, c.write); !errors.Is(err, c.want) || !errors.As(err, new(statusErr)) {
			t.Errorf("fail(%v, write %v) = %v, want it to wrap %v and the original", c.err, c.write, err, c.want)
		}
	}
	for _, err := range []error{statusErr{404, "NoSuchBucket"}, statusErr{404, "NoSuchUpload"}} {
		if got := s.fail("op", "k", err, true); objectstore.IsNotExist(got) || objectstore.IsPrecondition(got) {
			t.Errorf("fail(%v) = %v, want no sentinel", err, got)
		}
	}
}

// TestDo: transient failures are retried up to MaxAttempts, definite ones
// and the caller's cancellation are not, and a hung attempt is cut off by
// its deadline and retried.
func TestDo(t *testing.T) {
	s := newTestStore(t, Tuning{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond,
		RequestTimeout: 50 * time.Millisecond})
	failing := func(errs ...error) (func(*attempt) error, *int) {
		calls := 0
		return func(*attempt) error {
			calls++
			if calls <= len(errs) {
				return errs[calls-1]
			}
			return nil
		}, &calls
	}
	unavailable := statusErr{503, "ServiceUnavailable"}
	for _, c := range []struct {
		name      string
		errs      []error
		wantCalls int
		wantErr   bool
	}{
		{"succeeds after two 503s", []error{unavailable, unavailable}, 3, false},
		{"gives up after three", []error{unavailable, unavailable, unavailable, unavailable}, 3, true},
		{"412 is final", []error{statusErr{412, "PreconditionFailed"}}, 1, true},
	} {
		fn, calls := failing(c.errs...)
		n, err := s.do(t.Context(), "op", 0, fn)
		if *calls != c.wantCalls || n != c.wantCalls || (err != nil) != c.wantErr {
			t.Errorf("%s: %d calls (do says %d), err %v; want %d calls, error %v", c.name, *calls, n, err, c.wantCalls, c.wantErr)
		}
	}
	hung := 0
	_, err := s.do(t.Context(), "op", 0, func(a *attempt) error {
		if hung++; hung == 1 {
			<-a.ctx.Done()
			return a.ctx.Err()
		}
		return nil
	})
	if err != nil || hung != 2 {
		t.Errorf("hung first attempt: %d attempts, err %v; want 2 attempts and success", hung, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	_, err = s.do(ctx, "op", 0, func(*attempt) error { calls++; cancel(); return unavailable })
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("canceled by the caller: %d calls, err %v; want 1 call and context.Canceled", calls, err)
	}
}

func TestBackoffBounded(t *testing.T) {
	s := newTestStore(t, Tuning{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second})
	for n := 1; n < 100; n++ {
		d := s.backoff(n)
		ceiling := min(100*time.Millisecond<<min(n-1, 20), time.Second)
		if d < ceiling/2 || d > ceiling {
			t.Fatalf("backoff(%d) = %s, want within [%s, %s]", n, d, ceiling/2, ceiling)
		}
	}
}

func TestETags(t *testing.T) {
	if got, want := singlePartETag([]byte("hello")), `"5d41402abc4b2a76b9719d911017c592"`; got != want {
		t.Errorf("singlePartETag(hello) = %s, want %s", got, want)
	}
	// Two parts of 5 and 1 bytes: MD5(MD5("hello") || MD5("!")) + "-2".
	if got, want := multipartETag([]byte("hello!"), 5), `"0d863916c854ca3eac88174ae4c22bab-2"`; got != want {
		t.Errorf("multipartETag = %s, want %s", got, want)
	}
}

func TestTuningValidate(t *testing.T) {
	if _, err := New(Config{Name: "t", Tuning: Tuning{PartSize: 1 << 20}}, statusWire{}); err == nil {
		t.Error("a 1 MiB part size was accepted")
	}
	if _, err := New(Config{Name: "t", Prefix: "a//b"}, statusWire{}); !errors.Is(err, objectstore.ErrInvalidKey) {
		t.Errorf("prefix a//b: %v, want ErrInvalidKey", err)
	}
}

// TestDefaultAttemptLeavesRoomForRetry: with the default tuning, a GET
// that stalls before its first byte gives up, and backs off for its retry,
// within half of the read cache's 30 s block-load deadline
// (storage/partition), so the retry has the other half.
func TestDefaultAttemptLeavesRoomForRetry(t *testing.T) {
	const blockLoadDeadline = 30 * time.Second
	tuning := Tuning{}.withDefaults()
	a := &attempt{tuning: &tuning}
	if d := a.allowance(0) + tuning.MaxDelay; d > blockLoadDeadline/2 {
		t.Errorf("a stalled attempt and its backoff take %v: more than half of the %v block-load deadline", d, blockLoadDeadline)
	}
}
