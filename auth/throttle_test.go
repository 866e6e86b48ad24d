package auth

import (
	"fmt"
	"net"
	"testing"
	"time"
)

func TestThrottle(t *testing.T) {
	th := NewThrottle(ThrottleOptions{Base: 100 * time.Millisecond, Max: time.Second, Forget: time.Minute, Sources: 3})
	now := time.Unix(1000, 0)
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, w := range want {
		if d := th.Failure("a", now); d != w*time.Millisecond {
			t.Fatalf("failure %d: %v, want %v", i+1, d, w*time.Millisecond)
		}
	}
	if d := th.Failure("b", now); d != 100*time.Millisecond {
		t.Fatalf("another source: %v", d)
	}
	th.Success("a")
	if d := th.Failure("a", now); d != 100*time.Millisecond {
		t.Fatalf("after a success: %v", d)
	}
	th.Failure("a", now)
	if d := th.Failure("a", now.Add(2*time.Minute)); d != 100*time.Millisecond {
		t.Fatalf("after the forget interval: %v", d)
	}
	for i := range 100 {
		th.Failure(fmt.Sprint("s", i), now.Add(2*time.Minute))
	}
	if th.Len() != 3 {
		t.Fatalf("%d sources kept, want 3", th.Len())
	}
	// A huge failure count neither overflows nor passes Max.
	for range 10000 {
		th.Failure("flood", now.Add(3*time.Minute))
	}
	if d := th.Failure("flood", now.Add(3*time.Minute)); d != time.Second {
		t.Fatalf("flood: %v", d)
	}
}

func TestSource(t *testing.T) {
	if s := Source(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5555}); s != "127.0.0.1" {
		t.Fatalf("%q", s)
	}
	if s := Source(nil); s != "" {
		t.Fatalf("%q", s)
	}
}
