// Package testwait waits in tests for a condition another goroutine or
// process makes true, bounded by a deadline, instead of sleeping a guessed
// time. A deadline here is a hang guard, never a timing assertion: a correct
// program meets the condition far sooner.
package testwait

import (
	"testing"
	"time"
)

// Polls start short, so a condition met at once costs little, and back off
// to maxPoll, so a long wait does not spin.
const (
	firstPoll = time.Millisecond
	maxPoll   = 50 * time.Millisecond
)

// Until calls cond until it returns true, and fails the test with the
// message (fmt.Sprintf(format, args...)) when it has not within timeout.
// Like t.Fatalf it must be called from the test's goroutine. An argument
// that is a Later is formatted at the failure, to show the last state seen.
func Until(t testing.TB, timeout time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	if !Poll(timeout, cond) {
		t.Fatalf(format, args...)
	}
}

// Poll calls cond until it returns true or timeout passes, and reports
// whether it did; for callers that fail other than with t.Fatalf.
func Poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for wait := firstPoll; ; wait = min(2*wait, maxPoll) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(wait)
	}
}

// Later is a failure message argument computed when the message is
// formatted (it is a fmt.Stringer), such as the last value cond saw.
type Later func() string

// String returns the value the func computes now.
func (l Later) String() string { return l() }
