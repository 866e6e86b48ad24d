package metadata_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sediment-io/sediment/metadata"
)

// splitKV is a KV with etcd's default limits: it refuses a transaction
// over them, as etcdkv does, and can fail transactions from the nth on
// (a crash: nothing from then on reaches the store) or run a hook before
// one.
type splitKV struct {
	metadata.KV
	mu     sync.Mutex // guards every field below
	txns   int
	failAt int  // 0: never; else the txn number from which on every txn fails
	lose   bool // instead: failAt's txn applies and its answer is lost (an unknown outcome)
	before func(n int)
}

var errCrash = errors.New("injected: broker crashed")

func (k *splitKV) TxnLimits() metadata.TxnLimits {
	return metadata.TxnLimits{MaxOps: 128, MaxBytes: 1536<<10 - 1024}
}

func (k *splitKV) Txn(ctx context.Context, conds []metadata.Cond, ops []metadata.Op) (int64, error) {
	k.mu.Lock()
	k.txns++
	n, failAt, lose, before := k.txns, k.failAt, k.lose, k.before
	k.mu.Unlock()
	if before != nil {
		before(n)
	}
	if len(conds) > 128 || len(ops) > 128 {
		return 0, fmt.Errorf("over etcd's limits: %d conditions, %d writes", len(conds), len(ops))
	}
	switch {
	case failAt == 0 || n < failAt || lose && n > failAt:
	case lose:
		if _, err := k.KV.Txn(ctx, conds, ops); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("injected answer lost: %w", metadata.ErrUncertain)
	default:
		return 0, errCrash
	}
	return k.KV.Txn(ctx, conds, ops)
}

// arm makes the nth transaction from now on fail (see failAt).
func (k *splitKV) arm(n int, lose bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.failAt, k.lose = k.txns+n, lose
}

func (k *splitKV) disarm() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.failAt, k.lose, k.before = 0, false, nil
}

func (k *splitKV) count() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.txns
}

func newSplitStore(t *testing.T) (*metadata.Store, *splitKV) {
	t.Helper()
	bolt, err := metadata.OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	kv := &splitKV{KV: bolt}
	s := metadata.NewStore(kv)
	t.Cleanup(func() { s.Close() })
	return s, kv
}

// keysUnder counts the stored keys starting with prefix.
func keysUnder(t *testing.T, kv metadata.KV, prefix string) int {
	t.Helper()
	items, err := kv.Range(context.Background(), prefix, metadata.PrefixEnd(prefix), 0, false)
	if err != nil {
		t.Fatal(err)
	}
	return len(items)
}

// checkTopic checks that the topic is visible with n partitions, each with
// a state, and that no partition state or pending record is left beyond.
func checkTopic(t *testing.T, s *metadata.Store, kv metadata.KV, name string, id metadata.TopicID, n int32) {
	t.Helper()
	ctx := context.Background()
	top, ok, err := s.Topic(ctx, name)
	if err != nil || !ok || top.Partitions != n || top.ID != id {
		t.Fatalf("topic %s: %+v ok=%v err=%v, want %d partitions", name, top, ok, err, n)
	}
	if got := keysUnder(t, kv, "parts/"+id.String()+"/"); got != int(n) {
		t.Fatalf("%d partition states, want %d", got, n)
	}
	if got := keysUnder(t, kv, "pending-topics/"); got != 0 {
		t.Fatalf("%d pending records left", got)
	}
}

// A topic of 1,000 partitions, then grown to 1,500, is written within
// etcd's limits, in several transactions, and has every partition's state.
func TestCreateAndGrowSplitWithinLimits(t *testing.T) {
	ctx := context.Background()
	s, kv := newSplitStore(t)
	id := metadata.NewTopicID()
	top := metadata.Topic{Name: "big", ID: id, Partitions: 1000}
	if err := s.CreateTopic(ctx, top); err != nil {
		t.Fatal(err)
	}
	if n := kv.count(); n < 9 {
		t.Fatalf("create took %d transactions, want it split", n)
	}
	checkTopic(t, s, kv, "big", id, 1000)
	old, _, _ := s.Topic(ctx, "big")
	grown := old
	grown.Partitions = 1500
	if err := s.UpdateTopic(ctx, old, grown); err != nil {
		t.Fatal(err)
	}
	checkTopic(t, s, kv, "big", id, 1500)
	if err := s.CreateTopic(ctx, metadata.Topic{Name: "big", ID: metadata.NewTopicID(), Partitions: 500}); !errors.Is(err, metadata.ErrTopicExists) {
		t.Fatalf("second create: %v, want ErrTopicExists", err)
	}
	if got := keysUnder(t, kv, "parts/"); got != 1500 {
		t.Fatalf("%d partition states after the refused create, want 1500", got)
	}
}

// A crash at every transaction of a split create leaves no visible topic
// (or, at the last one, the whole topic); the cleanup then removes every
// leftover, and the name can be created again.
func TestSplitCreateCrashAtEveryStep(t *testing.T) {
	ctx := context.Background()
	const parts = 300 // 1 pending record, 3 chunks, the topic record
	for step := 1; step <= 5; step++ {
		t.Run(fmt.Sprint("step", step), func(t *testing.T) {
			s, kv := newSplitStore(t)
			id := metadata.NewTopicID()
			kv.arm(step, false)
			if err := s.CreateTopic(ctx, metadata.Topic{Name: "t", ID: id, Partitions: parts}); !errors.Is(err, errCrash) {
				t.Fatalf("create: %v, want the crash", err)
			}
			kv.disarm()
			if _, ok, err := s.Topic(ctx, "t"); err != nil || ok {
				t.Fatalf("topic visible after a crash at step %d: ok=%v err=%v", step, ok, err)
			}
			if err := s.ReleasePendingTopics(ctx, 0); err != nil {
				t.Fatal(err)
			}
			if n := keysUnder(t, kv, "parts/") + keysUnder(t, kv, "pending-topics/"); n != 0 {
				t.Fatalf("%d keys left after the cleanup", n)
			}
			id2 := metadata.NewTopicID()
			if err := s.CreateTopic(ctx, metadata.Topic{Name: "t", ID: id2, Partitions: parts}); err != nil {
				t.Fatal(err)
			}
			checkTopic(t, s, kv, "t", id2, parts)
		})
	}
}

// A split create that fails without crashing abandons its own pieces at
// once: nothing is left for the cleanup.
func TestSplitCreateFailureCleansUp(t *testing.T) {
	ctx := context.Background()
	s, kv := newSplitStore(t)
	kv.before = func(n int) {
		if n == 3 { // the second chunk: a concurrent cleanup with no grace claims the pending record
			if err := metadata.NewStore(kv.KV).ReleasePendingTopics(ctx, 0); err != nil {
				t.Error(err)
			}
		}
	}
	err := s.CreateTopic(ctx, metadata.Topic{Name: "t", ID: metadata.NewTopicID(), Partitions: 300})
	if !metadata.IsConflict(err) || errors.Is(err, metadata.ErrTopicExists) {
		t.Fatalf("create: %v, want a conflict (its pending record was claimed)", err)
	}
	kv.disarm()
	if n := keysUnder(t, kv, "topics/") + keysUnder(t, kv, "parts/") + keysUnder(t, kv, "pending-topics/"); n != 0 {
		t.Fatalf("%d keys left", n)
	}
}

// The answer of each transaction of a split create in turn is lost after
// it applied. Of the pending record and of the topic record, the read-back
// finds them written, and the create succeeds; of a chunk, the create
// fails and abandons its pieces at once.
func TestSplitCreateLostAnswerIsReadBack(t *testing.T) {
	ctx := context.Background()
	for step := 1; step <= 5; step++ {
		t.Run(fmt.Sprint("step", step), func(t *testing.T) {
			s, kv := newSplitStore(t)
			id := metadata.NewTopicID()
			kv.arm(step, true)
			err := s.CreateTopic(ctx, metadata.Topic{Name: "t", ID: id, Partitions: 300})
			kv.disarm()
			if step == 1 || step == 5 {
				if err != nil {
					t.Fatalf("create: %v", err)
				}
				checkTopic(t, s, kv, "t", id, 300)
				return
			}
			if !metadata.IsUncertain(err) {
				t.Fatalf("create: %v, want the unknown outcome", err)
			}
			if n := keysUnder(t, kv, "topics/") + keysUnder(t, kv, "parts/") + keysUnder(t, kv, "pending-topics/"); n != 0 {
				t.Fatalf("%d keys left", n)
			}
		})
	}
}

// A grow that crashed between its pieces leaves the topic at its old count
// and blocks the next grow (ErrTopicBusy) until the cleanup removed its
// states; then the topic grows, and only the partitions of the topic record
// have a state.
func TestSplitGrowCrash(t *testing.T) {
	ctx := context.Background()
	s, kv := newSplitStore(t)
	id := metadata.NewTopicID()
	if err := s.CreateTopic(ctx, metadata.Topic{Name: "t", ID: id, Partitions: 10}); err != nil {
		t.Fatal(err)
	}
	old, _, _ := s.Topic(ctx, "t")
	grown := old
	grown.Partitions = 400
	kv.arm(3, false) // after the pending record and one chunk
	if err := s.UpdateTopic(ctx, old, grown); !errors.Is(err, errCrash) {
		t.Fatalf("grow: %v, want the crash", err)
	}
	kv.disarm()
	cur, _, _ := s.Topic(ctx, "t")
	if cur.Partitions != 10 {
		t.Fatalf("topic at %d partitions after a crashed grow", cur.Partitions)
	}
	small := cur
	small.Partitions = 12
	if err := s.UpdateTopic(ctx, cur, small); !errors.Is(err, metadata.ErrTopicBusy) {
		t.Fatalf("grow over an interrupted one: %v, want ErrTopicBusy", err)
	}
	configured := cur
	configured.Configs = map[string]string{"retention.ms": "1000"}
	if err := s.UpdateTopic(ctx, cur, configured); err != nil {
		t.Fatalf("config change while an interrupted grow waits for its cleanup: %v", err)
	}
	cur, _, _ = s.Topic(ctx, "t")
	small = cur
	small.Partitions = 12
	if err := s.ReleasePendingTopics(ctx, 0); err != nil {
		t.Fatal(err)
	}
	checkTopic(t, s, kv, "t", id, 10)
	if err := s.UpdateTopic(ctx, cur, small); err != nil {
		t.Fatal(err)
	}
	checkTopic(t, s, kv, "t", id, 12)
}

// A grow read from a stale topic record writes no partition state at all:
// a live partition's state is never reset by it.
func TestSplitGrowFromStaleTopic(t *testing.T) {
	ctx := context.Background()
	s, kv := newSplitStore(t)
	id := metadata.NewTopicID()
	if err := s.CreateTopic(ctx, metadata.Topic{Name: "t", ID: id, Partitions: 10}); err != nil {
		t.Fatal(err)
	}
	stale, _, _ := s.Topic(ctx, "t")
	next := stale
	next.Partitions = 20
	if err := s.UpdateTopic(ctx, stale, next); err != nil {
		t.Fatal(err)
	}
	if err := s.SetLogStartOffset(ctx, id, 15, 7); err != nil {
		t.Fatal(err)
	}
	big := stale
	big.Partitions = 400
	if err := s.UpdateTopic(ctx, stale, big); !metadata.IsConflict(err) {
		t.Fatalf("grow from a stale record: %v, want a conflict", err)
	}
	if st, _, _ := s.PartitionState(ctx, id, 15); st.LogStartOffset != 7 {
		t.Fatalf("live partition 15 reset to %+v", st)
	}
	checkTopic(t, s, kv, "t", id, 20)
}

// Deleting a topic whose grow was interrupted removes the grow's record
// and states with it.
func TestDeleteTopicDuringSplitGrow(t *testing.T) {
	ctx := context.Background()
	s, kv := newSplitStore(t)
	id := metadata.NewTopicID()
	if err := s.CreateTopic(ctx, metadata.Topic{Name: "t", ID: id, Partitions: 10}); err != nil {
		t.Fatal(err)
	}
	old, _, _ := s.Topic(ctx, "t")
	grown := old
	grown.Partitions = 400
	kv.arm(3, false)
	if err := s.UpdateTopic(ctx, old, grown); !errors.Is(err, errCrash) {
		t.Fatalf("grow: %v", err)
	}
	kv.disarm()
	if err := s.DeleteTopic(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseDeletedTopics(ctx, 0); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"topics/", "parts/", "pending-topics/", "deleted-topics/"} {
		if n := keysUnder(t, kv, prefix); n != 0 {
			t.Fatalf("%d keys left under %s", n, prefix)
		}
	}
}

// Releasing a deleted topic's large index stays within etcd's limits.
func TestReleaseDeletedTopicWithinLimits(t *testing.T) {
	ctx := context.Background()
	s, kv := newSplitStore(t)
	id := metadata.NewTopicID()
	if err := s.CreateTopic(ctx, metadata.Topic{Name: "t", ID: id, Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	for i := range int64(150) {
		var commits []metadata.SegmentCommit
		for p := range int32(2) {
			commits = append(commits, metadata.SegmentCommit{Segment: metadata.Segment{Topic: id, Partition: p,
				BaseOffset: i, EndOffset: i + 1, Object: fmt.Sprintf("obj-%03d", i), Pos: int64(p), Len: 1}})
		}
		if _, err := s.CommitSegments(ctx, commits); err != nil {
			t.Fatal(err)
		}
	}
	top, _, _ := s.Topic(ctx, "t")
	if err := s.DeleteTopic(ctx, top); err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseDeletedTopic(ctx, id, 0); err != nil {
		t.Fatal(err)
	}
	if n := keysUnder(t, kv, "index/") + keysUnder(t, kv, "objects/"); n != 0 {
		t.Fatalf("%d index entries and object records left", n)
	}
	if n := keysUnder(t, kv, "garbage/"); n != 150 {
		t.Fatalf("%d garbage records, want 150", n)
	}
}
