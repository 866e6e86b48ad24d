package metadata_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/sediment-io/sediment/metadata"
)

func aclRec(name string, op int8) metadata.ACLRecord {
	return metadata.ACLRecord{ResourceType: 2, ResourceName: name, PatternType: 3, Principal: "User:alice",
		Host: "*", Operation: op, Permission: 3}
}

// ACLs are stored, loaded, deduplicated and deleted on both backends, and
// every write moves the revision.
func TestACLsRoundTrip(t *testing.T) {
	onBothBackends(t, func(t *testing.T, kv metadata.KV) {
		ctx := context.Background()
		s := metadata.NewStore(kv)
		snap, err := s.LoadACLs(ctx)
		if err != nil || snap.Revision != 0 || len(snap.ACLs) != 0 {
			t.Fatalf("empty store: %+v %v", snap, err)
		}
		long := strings.Repeat("/é", 20000) // escaped far beyond a bbolt key
		recs := []metadata.ACLRecord{aclRec("a", 3), aclRec("a/b", 3), aclRec(long, 4), aclRec("a", 3)}
		stored, added, err := s.CreateACLs(ctx, recs)
		if err != nil || stored != 4 || len(added) != 3 {
			t.Fatalf("create: stored %d added %d: %v", stored, len(added), err)
		}
		rev1, err := s.ACLRevision(ctx)
		if err != nil || rev1 == 0 {
			t.Fatalf("revision after create: %d %v", rev1, err)
		}
		_, added, err = s.CreateACLs(ctx, recs[:1])
		if err != nil || len(added) != 0 {
			t.Fatalf("create again: added %v: %v", added, err)
		}
		if rev, _ := s.ACLRevision(ctx); rev != rev1 {
			t.Fatalf("a create that added nothing moved the revision %d -> %d", rev1, rev)
		}
		snap, err = s.LoadACLs(ctx)
		if err != nil || snap.Revision != rev1 || len(snap.ACLs) != 3 {
			t.Fatalf("load: rev %d (want %d), %d ACLs: %v", snap.Revision, rev1, len(snap.ACLs), err)
		}
		gone, err := s.DeleteACLs(ctx, func(r metadata.ACLRecord) bool { return strings.HasPrefix(r.ResourceName, "a") })
		if err != nil || len(gone) != 2 {
			t.Fatalf("delete: %v %v", gone, err)
		}
		snap, err = s.LoadACLs(ctx)
		if err != nil || snap.Revision <= rev1 || len(snap.ACLs) != 1 || snap.ACLs[0].ResourceName != long {
			t.Fatalf("after delete: rev %d, %d ACLs: %v", snap.Revision, len(snap.ACLs), err)
		}
	})
}

// Writers racing on the ACLs each lose compare-and-swaps and retry; none
// of their bindings is lost.
func TestACLsConcurrentWriters(t *testing.T) {
	onBothBackends(t, func(t *testing.T, kv metadata.KV) {
		ctx := context.Background()
		const writers, each = 4, 5
		var wg sync.WaitGroup
		errs := make(chan error, writers*each)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := metadata.NewStore(kv)
				for i := range each {
					if _, _, err := s.CreateACLs(ctx, []metadata.ACLRecord{aclRec(fmt.Sprintf("w%d-%d", w, i), 3)}); err != nil {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		snap, err := metadata.NewStore(kv).LoadACLs(ctx)
		if err != nil || len(snap.ACLs) != writers*each {
			t.Fatalf("%d ACLs, want %d: %v", len(snap.ACLs), writers*each, err)
		}
	})
}

// interleaveKV lets another ACL write land just before the first ACL
// transaction, as a second broker's would.
type interleaveKV struct {
	metadata.KV
	once  sync.Once
	other func()
}

func (k *interleaveKV) Txn(ctx context.Context, conds []metadata.Cond, ops []metadata.Op) (int64, error) {
	k.once.Do(k.other)
	return k.KV.Txn(ctx, conds, ops)
}

// A write that lost its compare-and-swap to another writer reads again:
// a delete also removes the binding the other writer just added if it
// matches, and keeps the ones that do not.
func TestACLsDeleteAfterConflict(t *testing.T) {
	onBothBackends(t, func(t *testing.T, kv metadata.KV) {
		ctx := context.Background()
		base := metadata.NewStore(kv)
		if _, _, err := base.CreateACLs(ctx, []metadata.ACLRecord{aclRec("x1", 3), aclRec("y", 3)}); err != nil {
			t.Fatal(err)
		}
		ikv := &interleaveKV{KV: kv}
		ikv.other = func() {
			if _, _, err := base.CreateACLs(ctx, []metadata.ACLRecord{aclRec("x2", 3), aclRec("z", 3)}); err != nil {
				t.Error(err)
			}
		}
		gone, err := metadata.NewStore(ikv).DeleteACLs(ctx, func(r metadata.ACLRecord) bool {
			return strings.HasPrefix(r.ResourceName, "x")
		})
		if err != nil || len(gone) != 2 {
			t.Fatalf("delete: %v %v", gone, err)
		}
		snap, _ := base.LoadACLs(ctx)
		if len(snap.ACLs) != 2 {
			t.Fatalf("left %v, want y and z", snap.ACLs)
		}
	})
}

// limitedKV gives a KV etcd's limits of transaction size, on any backend.
type limitedKV struct {
	metadata.KV
	limits metadata.TxnLimits
	txns   int
}

func (k *limitedKV) TxnLimits() metadata.TxnLimits { return k.limits }

func (k *limitedKV) Txn(ctx context.Context, conds []metadata.Cond, ops []metadata.Op) (int64, error) {
	if len(ops) > k.limits.MaxOps || len(conds) > k.limits.MaxOps {
		return 0, fmt.Errorf("transaction of %d ops over the limit %d", len(ops), k.limits.MaxOps)
	}
	k.txns++
	return k.KV.Txn(ctx, conds, ops)
}

// More bindings than one transaction takes are written, and deleted, in
// several, each within the limits (a real etcd refuses more than 128 ops).
func TestACLsSplitToLimits(t *testing.T) {
	onBothBackends(t, func(t *testing.T, kv metadata.KV) {
		ctx := context.Background()
		lkv := &limitedKV{KV: kv, limits: metadata.TxnLimits{MaxOps: 128, MaxBytes: 1536 << 10, OpBytes: 64}}
		s := metadata.NewStore(lkv)
		var recs []metadata.ACLRecord
		for i := range 300 {
			recs = append(recs, aclRec(fmt.Sprintf("t%03d", i), 3))
		}
		stored, added, err := s.CreateACLs(ctx, recs)
		if err != nil || stored != 300 || len(added) != 300 {
			t.Fatalf("create: %d %d %v", stored, len(added), err)
		}
		if lkv.txns != 3 {
			t.Fatalf("%d transactions, want 3", lkv.txns)
		}
		gone, err := s.DeleteACLs(ctx, func(metadata.ACLRecord) bool { return true })
		if err != nil || len(gone) != 300 {
			t.Fatalf("delete: %d %v", len(gone), err)
		}
		if snap, _ := s.LoadACLs(ctx); len(snap.ACLs) != 0 {
			t.Fatalf("%d left", len(snap.ACLs))
		}
	})
}
