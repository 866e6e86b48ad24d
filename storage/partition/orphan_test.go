package partition

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/objectstore"
)

// commitLiveObjects stores n objects under the upload prefix and commits
// each as a one-record segment of p, as a long-retention log holds them.
// It returns their keys in order.
func commitLiveObjects(t *testing.T, e *logEnv, p *Partition, n int) []string {
	t.Helper()
	ctx := context.Background()
	keys := make([]string, n)
	for i := range n {
		keys[i] = fmt.Sprintf("%s%013d-0-live%05d.obj", uploadPrefix, 1000+i, i)
		if _, err := e.store.Put(ctx, keys[i], []byte("live"), objectstore.Condition{}); err != nil {
			t.Fatal(err)
		}
		seg := metadata.Segment{Topic: p.topic.ID, Partition: p.index, BaseOffset: int64(i), EndOffset: int64(i + 1), Object: keys[i], Len: 4}
		if _, err := e.meta.CommitSegments(ctx, []metadata.SegmentCommit{{Segment: seg}}); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// putOrphans stores an orphan after every step-th live key (so most sort
// after the first 10,000 keys) and two under the compacted prefix.
func putOrphans(t *testing.T, e *logEnv, p *Partition, live, step int) []string {
	t.Helper()
	var keys []string
	for i := 0; i < live; i += step {
		keys = append(keys, fmt.Sprintf("%s%013d-0-orphan.obj", uploadPrefix, 1000+i))
	}
	for _, base := range []int{0, live} {
		keys = append(keys, fmt.Sprintf("%s%s/%d/%020d-0000000001000-orphan.obj", compactPrefix, p.topic.ID, p.index, base))
	}
	for _, k := range keys {
		if _, err := e.store.Put(context.Background(), k, []byte("orphan"), objectstore.Condition{}); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// checkSwept asserts that every live key is still stored and no orphan is.
func checkSwept(t *testing.T, e *logEnv, live, orphans []string) {
	t.Helper()
	have := storeKeys(t, e.store, uploadPrefix)
	have = append(have, storeKeys(t, e.store, compactPrefix)...)
	var lost, left []string
	for _, k := range live {
		if _, found := slices.BinarySearch(have, k); !found {
			lost = append(lost, k)
		}
	}
	for _, k := range orphans {
		if slices.Contains(have, k) {
			left = append(left, k)
		}
	}
	if len(lost) > 0 || len(left) > 0 {
		t.Fatalf("%d live objects deleted (first %q), %d of %d orphans left (first %q)",
			len(lost), first(lost), len(left), len(orphans), first(left))
	}
}

func first(keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	return keys[0]
}

// memMetaEnv is lifecycleEnv on in-memory metadata, so a test can commit
// thousands of objects quickly.
func memMetaEnv(t *testing.T, edit func(*Options)) (*logEnv, *Log) {
	e := newLogEnv(t, func(o *Options) {
		o.MaintainInterval = time.Hour
		edit(o)
	})
	e.meta = metadata.NewStore(newMemKV())
	return e, e.open()
}

// TestOrphanSweepPastLiveObjects: with 12,000 live objects older than the
// grace period, one sweep deletes every orphan, including those listed
// after the first 10,000 keys, and keeps every live object.
func TestOrphanSweepPastLiveObjects(t *testing.T) {
	e, l := memMetaEnv(t, func(o *Options) { o.OrphanGrace = 1 })
	p := createTopic(t, l, "long", 1, nil).Partition(0)
	live := commitLiveObjects(t, e, p, 12000)
	orphans := putOrphans(t, e, p, len(live), 250)
	if err := l.sweepOrphans(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkSwept(t, e, live, orphans)
}

// TestOrphanSweepResumes: a sweep bounded below the listing's length stops
// at its bound, saves its place in metadata, and the next passes (on a
// reopened log) resume there until the listing is done and starts over.
func TestOrphanSweepResumes(t *testing.T) {
	defer func(n, page int) { orphanSweepKeys, orphanPage = n, page }(orphanSweepKeys, orphanPage)
	orphanSweepKeys, orphanPage = 500, 100
	var listed atomic.Int64
	e, l := memMetaEnv(t, func(o *Options) {
		o.OrphanGrace = 1
		o.Store = &listCountingStore{Store: o.Store, listed: &listed}
	})
	p := createTopic(t, l, "resume", 1, nil).Partition(0)
	live := commitLiveObjects(t, e, p, 1200)
	orphans := putOrphans(t, e, p, len(live), 100)
	ctx := context.Background()
	if err := l.sweepOrphans(ctx); err != nil {
		t.Fatal(err)
	}
	cur, err := e.meta.OrphanSweepCursor(ctx)
	if err != nil || cur.After == "" {
		t.Fatalf("cursor after a bounded pass: %+v, %v; want a saved place", cur, err)
	}
	if n := len(storeKeys(t, e.store, uploadPrefix)); n <= len(live) {
		t.Fatalf("one pass of 500 keys left %d upload objects: it examined more than its bound", n)
	}
	for range 2 { // 1,200 live keys + 14 orphans: three passes of 500
		if err := l.sweepOrphans(ctx); err != nil {
			t.Fatal(err)
		}
	}
	checkSwept(t, e, live, orphans)
	if cur, _ := e.meta.OrphanSweepCursor(ctx); cur.After != "" {
		t.Fatalf("cursor %q after the whole listing, want it to start over", cur.After)
	}
	// Each pass lists from its cursor: the three passes together list
	// about the whole listing once, not the keys before the cursor again.
	if n, all := listed.Load(), int64(len(live)+len(orphans)); n > all+int64(orphanPage) {
		t.Fatalf("three passes listed %d keys of a %d-key listing: resumed passes listed from the start", n, all)
	}
}

// listCountingStore counts the keys its listings deliver.
type listCountingStore struct {
	objectstore.Store
	listed *atomic.Int64
}

func (s *listCountingStore) List(ctx context.Context, prefix, after string, fn func(objectstore.Info) bool) error {
	return s.Store.List(ctx, prefix, after, func(info objectstore.Info) bool {
		s.listed.Add(1)
		return fn(info)
	})
}

// TestOrphanSweepRacingUpload: an upload's object is PUT, then a sweep
// runs (with a grace period shorter than the upload, the worst case), then
// the upload commits. The committed object must never be deleted. This
// broker's own sweep spares the objects it has in flight; another sweeper
// (a second broker on the same bucket) may claim it, and then the commit
// fails with ErrObjectSwept and the same data goes up under a new key.
func TestOrphanSweepRacingUpload(t *testing.T) {
	for _, tc := range []struct {
		name      string
		sweep     func(t *testing.T, e *logEnv, l *Log, key string)
		wantSwept bool
	}{
		{"own sweep spares it", func(t *testing.T, _ *logEnv, l *Log, _ string) {
			if err := l.sweepOrphans(context.Background()); err != nil {
				t.Errorf("sweep: %v", err)
			}
		}, false},
		{"another sweeper claims it", func(t *testing.T, e *logEnv, _ *Log, key string) {
			ctx := context.Background()
			if claimed, err := e.meta.ClaimOrphan(ctx, key); !claimed || err != nil {
				t.Errorf("claim %s: %v, %v", key, claimed, err)
			}
			if err := e.store.Delete(ctx, key); err != nil {
				t.Errorf("delete %s: %v", key, err)
			}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e *logEnv
			var l *Log
			var once sync.Once
			e, l = lifecycleEnv(t, func(o *Options) {
				o.OrphanGrace = 1
				o.TailCacheBytes = 1 // reads go to the object store
				o.AfterPut = func(key string) { once.Do(func() { tc.sweep(t, e, l, key) }) }
			})
			p := createTopic(t, l, "race", 1, nil).Partition(0)
			want := [][]byte{[]byte("a"), []byte("b")}
			produce(t, l, p, testBatch{values: want})
			_, err := l.up.cycle(context.Background())
			if swept := errors.Is(err, metadata.ErrObjectSwept); swept != tc.wantSwept {
				t.Errorf("upload: %v, want ErrObjectSwept %v", err, tc.wantSwept)
			}
			uploadAll(t, l)
			checkReferencedObjectsExist(t, e, p)
			checkContiguous(t, l, p, want)
		})
	}
}

// TestOrphanSweepLosesToCommit: the sweep finds an upload's object unknown,
// the upload commits before the sweep claims it, and the sweep keeps it.
func TestOrphanSweepLosesToCommit(t *testing.T) {
	put := make(chan struct{})
	resume := make(chan struct{})
	e := newLogEnv(t, func(o *Options) {
		o.MaintainInterval, o.OrphanGrace, o.TailCacheBytes = 1<<62, 1, 1
		o.AfterPut = func(string) { close(put); <-resume }
	})
	kv, err := metadata.OpenBolt(e.dir + "/meta.db")
	if err != nil {
		t.Fatal(err)
	}
	var upload sync.WaitGroup
	var uploadErr error
	var release sync.Once
	resumeUpload := func() { release.Do(func() { close(resume); upload.Wait() }) }
	e.meta = metadata.NewStore(&beforeClaim{KV: kv, hook: resumeUpload})
	l := e.open()
	p := createTopic(t, l, "race", 1, nil).Partition(0)
	want := [][]byte{[]byte("a")}
	produce(t, l, p, testBatch{values: want})
	upload.Add(1)
	go func() {
		defer upload.Done()
		_, uploadErr = l.up.cycle(context.Background())
	}()
	<-put
	err = l.sweepOrphans(context.Background())
	resumeUpload() // in case the sweep never tried to claim
	if err != nil || uploadErr != nil {
		t.Fatalf("sweep: %v; upload: %v; want both to succeed", err, uploadErr)
	}
	checkReferencedObjectsExist(t, e, p)
	checkContiguous(t, l, p, want)
}

// beforeClaim runs hook before the first transaction that writes an orphan
// tombstone.
type beforeClaim struct {
	metadata.KV
	once sync.Once
	hook func()
}

func (b *beforeClaim) Txn(ctx context.Context, conds []metadata.Cond, ops []metadata.Op) (int64, error) {
	for _, op := range ops {
		if len(op.Key) > 6 && op.Key[:6] == "swept/" {
			b.once.Do(b.hook)
		}
	}
	return b.KV.Txn(ctx, conds, ops)
}

// checkReferencedObjectsExist asserts that every object p's index
// references is in the store.
func checkReferencedObjectsExist(t *testing.T, e *logEnv, p *Partition) {
	t.Helper()
	segs, err := e.meta.Segments(context.Background(), p.topic.ID, p.index, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range segs {
		if _, err := e.store.Stat(context.Background(), s.Object); err != nil {
			t.Fatalf("segment [%d,%d) references %s: %v", s.BaseOffset, s.EndOffset, s.Object, err)
		}
	}
}
