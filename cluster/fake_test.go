package cluster

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/sediment-io/sediment/metadata"
)

// registry is the truth the fakes share: which node serves each slot as
// its owner right now. Two at once is the violation the cluster must
// never cause.
type registry struct {
	mu         sync.Mutex
	holder     map[string]int32
	violations []string
}

func newRegistry() *registry { return &registry{holder: map[string]int32{}} }

func (r *registry) take(key string, node int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h, ok := r.holder[key]; ok && h != node {
		r.violations = append(r.violations, fmt.Sprintf("%s: node %d acquired it while node %d served it", key, node, h))
	}
	r.holder[key] = node
}

func (r *registry) give(key string, node int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.holder[key] == node {
		delete(r.holder, key)
	}
}

func (r *registry) check(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range r.violations {
		t.Error(v)
	}
}

// fakeOwner is a partition log and group coordinator that records calls.
type fakeOwner struct {
	node int32
	reg  *registry

	mu          sync.Mutex
	owned       map[string]bool
	failAcquire map[string]int // failures still to inject, by slot
	failRelease map[string]int
	acquires    int
	releases    int
	drops       int
	syncs       int
}

func newFakeOwner(node int32, reg *registry) *fakeOwner {
	return &fakeOwner{node: node, reg: reg, owned: map[string]bool{}, failAcquire: map[string]int{}, failRelease: map[string]int{}}
}

func partName(id metadata.TopicID, p int32) string { return fmt.Sprintf("%s/%d", id, p) }

func shardName(s int32) string { return fmt.Sprintf("shard/%d", s) }

// injected consumes one injected failure of key, if any is left.
func (f *fakeOwner) injected(fails map[string]int, key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fails[key] == 0 {
		return nil
	}
	fails[key]--
	return fmt.Errorf("fake: injected failure of %s", key)
}

func (f *fakeOwner) take(key string) {
	f.reg.take(key, f.node)
	f.mu.Lock()
	f.owned[key] = true
	f.acquires++
	f.mu.Unlock()
}

func (f *fakeOwner) give(key string, drop bool) {
	f.mu.Lock()
	delete(f.owned, key)
	if drop {
		f.drops++
	} else {
		f.releases++
	}
	f.mu.Unlock()
	f.reg.give(key, f.node)
}

func (f *fakeOwner) Acquire(_ context.Context, id metadata.TopicID, p int32) error {
	if err := f.injected(f.failAcquire, partName(id, p)); err != nil {
		return err
	}
	f.take(partName(id, p))
	return nil
}

// Kept: the fake keeps no batch.
func (f *fakeOwner) Kept(metadata.TopicID, int32) metadata.KeptBatches { return metadata.KeptBatches{} }

// DropSuperseded: the fake keeps no batch.
func (f *fakeOwner) DropSuperseded(context.Context) error { return nil }

// Release fails, when told to, still serving the partition: Drop follows.
func (f *fakeOwner) Release(_ context.Context, id metadata.TopicID, p int32) error {
	if err := f.injected(f.failRelease, partName(id, p)); err != nil {
		return err
	}
	f.give(partName(id, p), false)
	return nil
}

func (f *fakeOwner) Drop(id metadata.TopicID, p int32) { f.give(partName(id, p), true) }

func (f *fakeOwner) SyncTopics(context.Context) error {
	f.mu.Lock()
	f.syncs++
	f.mu.Unlock()
	return nil
}

func (f *fakeOwner) AcquireShard(_ context.Context, s int32) error {
	f.take(shardName(s))
	return nil
}

func (f *fakeOwner) ReleaseShard(_ context.Context, s int32) error {
	f.give(shardName(s), false)
	return nil
}

func (f *fakeOwner) DropShard(s int32) { f.give(shardName(s), true) }

func (f *fakeOwner) owns(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.owned[key]
}

func (f *fakeOwner) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.owned)
}

func (f *fakeOwner) counts() (acquires, releases, drops int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.acquires, f.releases, f.drops
}
