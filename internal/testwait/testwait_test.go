package testwait

import (
	"fmt"
	"testing"
	"time"
)

// recorder is a testing.TB that records a Fatalf instead of stopping.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestUntilReturnsOnceCondHolds(t *testing.T) {
	r := &recorder{TB: t}
	calls := 0
	Until(r, time.Minute, func() bool { calls++; return calls == 3 }, "never")
	if r.failed != "" || calls != 3 {
		t.Fatalf("failed %q after %d calls, want no failure after 3", r.failed, calls)
	}
}

func TestUntilFailsAtTheDeadlineWithTheLastState(t *testing.T) {
	r := &recorder{TB: t}
	seen := 0
	Until(r, 10*time.Millisecond, func() bool { seen++; return false },
		"not so after %d polls: %v", 0, Later(func() string { return fmt.Sprint("last ", seen) }))
	want := fmt.Sprintf("not so after 0 polls: last %d", seen)
	if seen < 2 || r.failed != want {
		t.Fatalf("failed with %q after %d polls, want %q", r.failed, seen, want)
	}
}
