package groupcoord

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestRestartResumesStableGroup: a coordinator opened on the same metadata
// finds a stable group stable, with its generation, members, assignments
// and offsets: its members go on heartbeating and committing as if nothing
// happened, and one that does not is removed after its session timeout.
func TestRestartResumesStableGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ms := e.stableGroup("g", 2)
	e.commit("g", ms[0], nil, 7, 8, 9)
	e.restart()
	d := e.c.Describe("g")
	if d.Err != nil || d.State != StateStable || len(d.Members) != 2 || d.Protocol != "range" {
		t.Fatalf("after restart: %+v", d)
	}
	for i, m := range d.Members {
		if m.MemberID != ms[i].id || !bytes.Equal(m.Assignment, []byte{byte(i)}) {
			t.Fatalf("member %d after restart: %+v", i, m)
		}
	}
	if got := fmtOffsets(e.fetched("g")); got != "7,8,9,-1" {
		t.Fatalf("offsets after restart: %s", got)
	}
	sync := recv(t, e.c.Sync(SyncRequest{Group: "g", MemberID: ms[1].id, Generation: ms[1].gen}))
	if sync.Err != nil || !bytes.Equal(sync.Assignment, []byte{1}) {
		t.Fatalf("sync after restart: %+v", sync)
	}
	for range 9 {
		e.clock.Advance(time.Second)
		wantErr(t, "heartbeat after restart", e.heartbeat("g", ms[0]), nil)
	}
	if res := e.commit("g", ms[0], nil, 10); res.Err != nil {
		t.Fatalf("commit after restart: %+v", res)
	}
	e.clock.Advance(time.Second) // the silent member's session, from its sync
	wantErr(t, "the member that went silent", e.heartbeat("g", ms[1]), ErrUnknownMember)
	wantErr(t, "the other member", e.heartbeat("g", ms[0]), ErrRebalanceInProgress)
}

// TestRestartAfterStaticReplacement: a static member's new member id is
// durable before its JoinGroup is answered.
func TestRestartAfterStaticReplacement(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, _ = e.staticPair("g")
	res := recv(t, e.c.Join(staticJoin("g", "", "s-1")))
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	e.restart()
	err := e.c.Heartbeat(HeartbeatRequest{Group: "g", MemberID: res.MemberID, InstanceID: strPtr("s-1"), Generation: res.Generation})
	wantErr(t, "heartbeat of the replacement after restart", err, nil)
}

func TestConsumerTopics(t *testing.T) {
	t.Parallel()
	topics, ok := consumerTopics(subscription("a", "bb", ""))
	if !ok || len(topics) != 3 || topics[0] != "a" || topics[1] != "bb" || topics[2] != "" {
		t.Fatalf("decoded %q %v", topics, ok)
	}
	for _, bad := range [][]byte{nil, {0, 0, 0, 0, 0}, {0, 0, 0x7f, 0, 0, 0}, {0, 0, 0, 0, 0, 1, 0, 5, 'a'}, {0, 0, 0xff, 0xff, 0xff, 0xff}} {
		if _, ok := consumerTopics(bad); ok {
			t.Errorf("%x decoded", bad)
		}
	}
}

// FuzzConsumerTopics: the subscription decoder never panics, and what it
// accepts re-encodes to a prefix of its input.
func FuzzConsumerTopics(f *testing.F) {
	f.Add(subscription("t"))
	f.Add(subscription("a", "b", "c"))
	f.Add([]byte{0, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		topics, ok := consumerTopics(b)
		if !ok {
			return
		}
		again := subscription(topics...)
		again = again[:len(again)-4] // without the user data
		if !bytes.Equal(again[2:], b[2:len(again)]) {
			t.Fatalf("%x decoded to %q, which encodes as %x", b, topics, again)
		}
	})
}

// TestCloseStopsGoroutines: a closed coordinator leaves none of its
// goroutines (persister, janitor, timer callbacks) behind. Not parallel:
// it counts every goroutine of the package.
func TestCloseStopsGoroutines(t *testing.T) {
	e := newEnv(t)
	ms := e.stableGroup("g", 2)
	e.commit("g", ms[0], nil, 1)
	e.c.Join(join("g", "")) // a join left waiting
	if err := e.c.Close(); err != nil {
		t.Fatal(err)
	}
	var left []string
	for range 200 {
		if left = ourGoroutines(); len(left) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%d goroutines left after Close:\n%s", len(left), strings.Join(left, "\n\n"))
}

// ourGoroutines returns the stacks of goroutines running this package's
// code, other than tests.
func ourGoroutines() []string {
	buf := make([]byte, 1<<20)
	var out []string
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "sediment/groupcoord.") && !strings.Contains(g, "testing.tRunner") {
			out = append(out, g)
		}
	}
	return out
}
