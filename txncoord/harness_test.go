package txncoord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sediment-io/sediment/internal/testwait"
	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

// fakeClock moves only when a test advances it.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.UnixMilli(1_700_000_000_000)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fakeMarkers records every WriteMarkers call that succeeded; it fails
// the first fail calls, and while blocked a call waits until its context
// ends or the block is lifted, then fails.
type fakeMarkers struct {
	mu      sync.Mutex
	calls   []MarkerRequest // the calls that succeeded
	tries   int
	fail    int
	blocked chan struct{} // non-nil: calls wait until it is closed, then fail
}

func (m *fakeMarkers) WriteMarkers(ctx context.Context, r MarkerRequest) error {
	m.mu.Lock()
	m.tries++
	if m.blocked != nil {
		unblocked := m.blocked
		m.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-unblocked:
			return errors.New("fake markers: were blocked")
		}
	}
	if m.fail > 0 {
		m.fail--
		m.mu.Unlock()
		return errors.New("fake markers: partition leader unavailable")
	}
	m.calls = append(m.calls, r)
	m.mu.Unlock()
	return nil
}

func (m *fakeMarkers) written() []MarkerRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]MarkerRequest(nil), m.calls...)
}

func (m *fakeMarkers) setBlocked(b bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case b && m.blocked == nil:
		m.blocked = make(chan struct{})
	case !b && m.blocked != nil:
		close(m.blocked)
		m.blocked = nil
	}
}

func (m *fakeMarkers) attempts() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tries
}

func (m *fakeMarkers) failNext(n int) {
	m.mu.Lock()
	m.fail = n
	m.mu.Unlock()
}

// counterIDs hands out producer ids from 1000 up, shared by the
// coordinators of one test.
type counterIDs struct{ next atomic.Int64 }

func (p *counterIDs) Next(context.Context) (int64, error) { return 1000 + p.next.Add(1) - 1, nil }

// fakeFencer gives each shard the fence a test set.
type fakeFencer struct {
	mu     sync.Mutex
	fences map[int32]metadata.Cond
}

func (f *fakeFencer) ShardFence(shard int32) (metadata.Cond, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.fences[shard]
	return c, ok
}

func (f *fakeFencer) set(shard int32, c metadata.Cond) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fences == nil {
		f.fences = map[int32]metadata.Cond{}
	}
	f.fences[shard] = c
}

// env is a store and what the coordinators of one test share.
type env struct {
	t       *testing.T
	kv      metadata.KV
	meta    *metadata.Store
	clock   *fakeClock
	markers *fakeMarkers
	ids     *counterIDs
	topics  map[string]int32
}

func newEnv(t *testing.T) *env {
	t.Helper()
	kv, err := metadata.OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	return newEnvOn(t, kv)
}

// backends runs body on a bbolt store and on a real etcd.
func backends(t *testing.T, body func(t *testing.T, e *env)) {
	t.Run("bbolt", func(t *testing.T) { body(t, newEnv(t)) })
	t.Run("etcd", func(t *testing.T) {
		endpoint, _ := etcdtest.Start(t)
		body(t, newEnvOn(t, etcdtest.OpenKV(t, endpoint, "sediment")))
	})
}

func newEnvOn(t *testing.T, kv metadata.KV) *env {
	meta := metadata.NewStore(kv)
	t.Cleanup(func() { meta.Close() })
	return &env{t: t, kv: kv, meta: meta, clock: newFakeClock(), markers: &fakeMarkers{}, ids: &counterIDs{},
		topics: map[string]int32{"t": 3, "u": 1}}
}

func (e *env) config() Config {
	return Config{Meta: e.meta, ProducerIDs: e.ids, Markers: e.markers, Now: e.clock.Now,
		Topics: func(topic string) (int32, bool) { n, ok := e.topics[topic]; return n, ok },
		// The sweeps are called by the tests; their own loops stay idle.
		AbortSweepInterval: time.Hour, ExpireSweepInterval: time.Hour, Logger: slog.New(slog.DiscardHandler)}
}

// open opens a one-node coordinator on the env's store.
func (e *env) open() *Coordinator {
	return e.openWith(e.config())
}

func (e *env) openWith(cfg Config) *Coordinator {
	e.t.Helper()
	c, err := Open(context.Background(), cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// takeShard makes the fencer give shard a new fence: a key written in
// the store, as the cluster's owner key is.
func takeShard(t *testing.T, kv metadata.KV, f *fakeFencer, shard int32) metadata.Cond {
	t.Helper()
	key := fmt.Sprintf("test/own/%03d", shard)
	it, _, err := kv.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := kv.Txn(context.Background(), []metadata.Cond{{Key: key, Version: it.Version}},
		[]metadata.Op{metadata.Put(key, []byte("owner"))})
	if err != nil {
		t.Fatal(err)
	}
	c := metadata.Cond{Key: key, Version: rev}
	f.set(shard, c)
	return c
}

// initID runs InitProducerID with no KIP-360 ids.
func initID(t *testing.T, c *Coordinator, id string) InitResult {
	t.Helper()
	res, err := c.InitProducerID(context.Background(), InitRequest{TransactionalID: id, TimeoutMs: 60_000, ProducerID: -1, ProducerEpoch: -1})
	if err != nil {
		t.Fatalf("init %q: %v", id, err)
	}
	return res
}

func addParts(c *Coordinator, id string, p InitResult, parts ...TopicPartition) error {
	errs, err := c.AddPartitions(context.Background(), AddPartitionsRequest{TransactionalID: id, ProducerID: p.ProducerID,
		ProducerEpoch: p.ProducerEpoch, Partitions: parts})
	if err != nil {
		return err
	}
	var first error
	for tp, e := range errs {
		if e != nil && (first == nil || errors.Is(first, kerr.OperationNotAttempted)) {
			first = fmt.Errorf("%s/%d: %w", tp.Topic, tp.Partition, e)
		}
	}
	return first
}

func tp(topic string, p int32) TopicPartition { return TopicPartition{Topic: topic, Partition: p} }

// wantErr fails unless err is want (nil: no error), compared as Kafka
// codes.
func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("%s: got %v, want %v", what, err, want)
	}
}

// describe returns one id's description.
func describe(c *Coordinator, id string) Description { return c.Describe([]string{id})[0] }

// waitState waits until id is in state.
func waitState(t *testing.T, c *Coordinator, id string, s State) {
	t.Helper()
	testwait.Until(t, 10*time.Second, func() bool { return describe(c, id).State == s },
		"%q in state %v, want %v", id, testwait.Later(func() string { return describe(c, id).State.String() }), s)
}
