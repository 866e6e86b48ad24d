package groupcoord

import (
	"encoding/binary"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/sediment-io/sediment/metadata"
)

// fakeClock is a Clock that moves only when a test advances it; timers fire
// synchronously, in deadline order, inside Advance.
type fakeClock struct {
	mu     sync.Mutex // guards now and timers
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c       *fakeClock
	at      time.Time
	f       func()
	stopped bool // guarded by c.mu
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

// Advance moves the clock by d, firing every timer due on the way.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	target := c.now.Add(d)
	c.mu.Unlock()
	for range 100000 {
		t := c.nextDue(target)
		if t == nil {
			break
		}
		t.f()
	}
	c.mu.Lock()
	c.now = target
	c.mu.Unlock()
}

// nextDue removes and returns the earliest live timer due by target,
// moving the clock to its deadline.
func (c *fakeClock) nextDue(target time.Time) *fakeTimer {
	c.mu.Lock()
	defer c.mu.Unlock()
	live := c.timers[:0]
	for _, t := range c.timers {
		if !t.stopped {
			live = append(live, t)
		}
	}
	c.timers = live
	sort.SliceStable(c.timers, func(i, j int) bool { return c.timers[i].at.Before(c.timers[j].at) })
	if len(c.timers) == 0 || c.timers[0].at.After(target) {
		return nil
	}
	t := c.timers[0]
	c.timers = c.timers[1:]
	t.stopped = true
	if t.at.After(c.now) {
		c.now = t.at
	}
	return t
}

// fakeCluster is a Cluster whose topics and configs tests set.
type fakeCluster struct {
	mu     sync.Mutex // guards topics and config
	topics map[string]fakeTopic
	config map[string]string
}

type fakeTopic struct {
	id    metadata.TopicID
	parts int32
}

func (c *fakeCluster) BrokerConfig() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.config)
}

func (c *fakeCluster) TopicPartitions(name string) (metadata.TopicID, int32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.topics[name]
	return t.id, t.parts, ok
}

func (c *fakeCluster) setTopic(name string, parts int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.topics[name] = fakeTopic{metadata.NewTopicID(), parts}
}

func (c *fakeCluster) deleteTopic(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.topics, name)
}

// env is a coordinator under test with its clock, cluster and store.
type env struct {
	t       *testing.T
	c       *Coordinator
	clock   *fakeClock
	cluster *fakeCluster
	meta    *metadata.Store
}

// newEnv opens a coordinator over a fresh bbolt store with topic "t" (4
// partitions), no initial rebalance delay, and extra broker configs.
func newEnv(t *testing.T, kv ...string) *env {
	t.Helper()
	kvs, err := metadata.OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, clock: newFakeClock(), meta: metadata.NewStore(kvs),
		cluster: &fakeCluster{topics: map[string]fakeTopic{}, config: map[string]string{"group.initial.rebalance.delay.ms": "0"}}}
	for i := 0; i+1 < len(kv); i += 2 {
		e.cluster.config[kv[i]] = kv[i+1]
	}
	e.cluster.setTopic("t", 4)
	t.Cleanup(func() { e.meta.Close() })
	e.open()
	return e
}

// open starts a coordinator over the env's store.
func (e *env) open() {
	e.t.Helper()
	c, err := Open(e.t.Context(), Config{Meta: e.meta, Cluster: e.cluster, Clock: e.clock, Logger: testLogger()})
	if err != nil {
		e.t.Fatal(err)
	}
	e.c = c
	e.t.Cleanup(func() { c.Close() })
}

// restart closes the coordinator and opens a new one on the same store.
func (e *env) restart() {
	e.t.Helper()
	if err := e.c.Close(); err != nil {
		e.t.Fatal(err)
	}
	e.open()
}

func testLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.DiscardHandler)
}

// hangBound guards every wait for a result: results come at once or after
// a durable write, never after real time passes.
const hangBound = 30 * time.Second

// recv returns the result on ch.
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(hangBound):
		t.Fatalf("no result within %v", hangBound)
	}
	var zero T
	return zero
}

// notYet fails the test if ch already holds a result. Join results are
// produced under the group's lock by the call or by clock.Advance, so
// "none yet" is certain, not a race.
func notYet[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("%s: answered early: %+v", what, v)
	default:
	}
}

// subscription encodes consumer protocol metadata (v0) for topics.
func subscription(topics ...string) []byte {
	b := binary.BigEndian.AppendUint16(nil, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(len(topics)))
	for _, tp := range topics {
		b = binary.BigEndian.AppendUint16(b, uint16(len(tp)))
		b = append(b, tp...)
	}
	return append(b, 0xff, 0xff, 0xff, 0xff) // null user data
}

// join builds a JoinRequest of a consumer subscribing to "t", with a 10 s
// session and a 5 s rebalance timeout.
func join(group, member string) JoinRequest {
	return JoinRequest{Group: group, MemberID: member, ClientID: "client", ClientHost: "/127.0.0.1",
		SessionTimeout: 10 * time.Second, RebalanceTimeout: 5 * time.Second, ProtocolType: "consumer",
		Protocols: []Protocol{{Name: "range", Metadata: subscription("t")}}}
}

func staticJoin(group, member, instance string) JoinRequest {
	r := join(group, member)
	r.InstanceID = &instance
	return r
}

// joined is a member as a test tracks it.
type joined struct {
	id  string
	gen int32
}

// mustJoin checks a join result and returns the member.
func mustJoin(t *testing.T, res JoinResult) joined {
	t.Helper()
	if res.Err != nil {
		t.Fatalf("join: %v", res.Err)
	}
	return joined{res.MemberID, res.Generation}
}

// stableGroup makes a stable group of n dynamic members joined together,
// the first its leader, each assigned its index as assignment.
func (e *env) stableGroup(group string, n int) []joined {
	e.t.Helper()
	var chans []<-chan JoinResult
	for range n {
		chans = append(chans, e.c.Join(join(group, "")))
	}
	e.clock.Advance(0) // the initial delay (0) ends
	ms := make([]joined, n)
	for i, ch := range chans {
		ms[i] = mustJoin(e.t, recv(e.t, ch))
	}
	e.sync(group, ms)
	return ms
}

// sync has ms[0] (the leader) assign member i the byte i, and every member
// sync.
func (e *env) sync(group string, ms []joined) {
	e.t.Helper()
	assign := map[string][]byte{}
	for i, m := range ms {
		assign[m.id] = []byte{byte(i)}
	}
	var chans []<-chan SyncResult
	for i, m := range ms {
		req := SyncRequest{Group: group, MemberID: m.id, Generation: m.gen}
		if i == 0 {
			req.Assignments = assign
		}
		chans = append(chans, e.c.Sync(req))
	}
	for i, ch := range chans {
		res := recv(e.t, ch)
		if res.Err != nil || len(res.Assignment) != 1 || res.Assignment[0] != byte(i) {
			e.t.Fatalf("sync of member %d: %+v", i, res)
		}
	}
}

func (e *env) heartbeat(group string, m joined) error {
	return e.c.Heartbeat(HeartbeatRequest{Group: group, MemberID: m.id, Generation: m.gen})
}

// state returns a group's state.
func (e *env) state(group string) State { return e.c.Describe(group).State }

func wantErr(t *testing.T, what string, got, want error) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: error %v, want %v", what, got, want)
	}
}
