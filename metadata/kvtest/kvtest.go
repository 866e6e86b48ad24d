// Package kvtest is the conformance suite every metadata.KV backend runs:
// one test body, run with t.Run against bbolt and a real (embedded) etcd.
package kvtest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sediment-io/sediment/metadata"
)

// Run runs the suite against stores made by newKV. Each subtest uses its own
// key prefix, so one store may serve them all.
func Run(t *testing.T, newKV func(t *testing.T) metadata.KV) {
	tests := []struct {
		name string
		fn   func(t *testing.T, kv metadata.KV, p string)
	}{
		{"GetMissing", testGetMissing},
		{"PutGet", testPutGet},
		{"CondAbsent", testCondAbsent},
		{"CondVersion", testCondVersion},
		{"ConflictChangesNothing", testConflictChangesNothing},
		{"Range", testRange},
		{"RangeReverse", testRangeReverse},
		{"DeletePrefix", testDeletePrefix},
		{"ConcurrentCAS", testConcurrentCAS},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newKV(t), "kvtest/"+tc.name+"/")
		})
	}
}

func mustTxn(t *testing.T, kv metadata.KV, conds []metadata.Cond, ops ...metadata.Op) int64 {
	t.Helper()
	rev, err := kv.Txn(context.Background(), conds, ops)
	if err != nil {
		t.Fatalf("txn: %v", err)
	}
	return rev
}

func mustGet(t *testing.T, kv metadata.KV, key string) metadata.Item {
	t.Helper()
	it, ok, err := kv.Get(context.Background(), key)
	if err != nil || !ok {
		t.Fatalf("get %q: ok=%v err=%v", key, ok, err)
	}
	return it
}

func testGetMissing(t *testing.T, kv metadata.KV, p string) {
	_, ok, err := kv.Get(context.Background(), p+"missing")
	if err != nil || ok {
		t.Fatalf("get missing: ok=%v err=%v", ok, err)
	}
}

func testPutGet(t *testing.T, kv metadata.KV, p string) {
	rev := mustTxn(t, kv, nil, metadata.Put(p+"a", []byte("one")), metadata.Put(p+"b", []byte("two")))
	a, b := mustGet(t, kv, p+"a"), mustGet(t, kv, p+"b")
	if string(a.Value) != "one" || string(b.Value) != "two" {
		t.Fatalf("values %q %q", a.Value, b.Value)
	}
	if a.Version != rev || b.Version != rev {
		t.Fatalf("versions %d %d, want txn rev %d", a.Version, b.Version, rev)
	}
	rev2 := mustTxn(t, kv, nil, metadata.Put(p+"a", []byte("uno")))
	if rev2 <= rev || mustGet(t, kv, p+"a").Version != rev2 {
		t.Fatalf("revision did not advance: %d then %d", rev, rev2)
	}
	mustTxn(t, kv, nil, metadata.Delete(p+"a"))
	if _, ok, _ := kv.Get(context.Background(), p+"a"); ok {
		t.Fatal("deleted key still present")
	}
}

func testCondAbsent(t *testing.T, kv metadata.KV, p string) {
	absent := []metadata.Cond{{Key: p + "k", Version: 0}}
	mustTxn(t, kv, absent, metadata.Put(p+"k", []byte("x")))
	_, err := kv.Txn(context.Background(), absent, []metadata.Op{metadata.Put(p+"k", []byte("y"))})
	if !metadata.IsConflict(err) {
		t.Fatalf("second create: err=%v, want conflict", err)
	}
	if v := mustGet(t, kv, p+"k").Value; string(v) != "x" {
		t.Fatalf("value overwritten: %q", v)
	}
}

func testCondVersion(t *testing.T, kv metadata.KV, p string) {
	mustTxn(t, kv, nil, metadata.Put(p+"k", []byte("1")))
	it := mustGet(t, kv, p+"k")
	mustTxn(t, kv, []metadata.Cond{{Key: p + "k", Version: it.Version}}, metadata.Put(p+"k", []byte("2")))
	_, err := kv.Txn(context.Background(), []metadata.Cond{{Key: p + "k", Version: it.Version}},
		[]metadata.Op{metadata.Put(p+"k", []byte("3"))})
	if !metadata.IsConflict(err) {
		t.Fatalf("stale version: err=%v, want conflict", err)
	}
}

func testConflictChangesNothing(t *testing.T, kv metadata.KV, p string) {
	mustTxn(t, kv, nil, metadata.Put(p+"guard", []byte("g")))
	_, err := kv.Txn(context.Background(), []metadata.Cond{{Key: p + "guard", Version: 0}},
		[]metadata.Op{metadata.Put(p+"other", []byte("o")), metadata.DeletePrefix(p)})
	if !metadata.IsConflict(err) {
		t.Fatalf("err=%v, want conflict", err)
	}
	if _, ok, _ := kv.Get(context.Background(), p+"other"); ok {
		t.Fatal("failed txn wrote a key")
	}
	mustGet(t, kv, p+"guard")
}

func putKeys(t *testing.T, kv metadata.KV, p string, n int) {
	ops := make([]metadata.Op, n)
	for i := range ops {
		ops[i] = metadata.Put(fmt.Sprintf("%s%03d", p, i), []byte{byte(i)})
	}
	mustTxn(t, kv, nil, ops...)
}

func testRange(t *testing.T, kv metadata.KV, p string) {
	putKeys(t, kv, p, 20)
	mustTxn(t, kv, nil, metadata.Put(p[:len(p)-1]+"0", []byte("outside")))
	all, err := kv.Range(context.Background(), p, metadata.PrefixEnd(p), 0, false)
	if err != nil || len(all) != 20 {
		t.Fatalf("range all: %d items, err=%v", len(all), err)
	}
	for i, it := range all {
		if it.Key != fmt.Sprintf("%s%03d", p, i) {
			t.Fatalf("item %d key %q", i, it.Key)
		}
	}
	some, err := kv.Range(context.Background(), p+"005", p+"010", 3, false)
	if err != nil || len(some) != 3 || some[0].Key != p+"005" || some[2].Key != p+"007" {
		t.Fatalf("range limit: %+v err=%v", some, err)
	}
}

func testRangeReverse(t *testing.T, kv metadata.KV, p string) {
	putKeys(t, kv, p, 20)
	// The classic "last key <= X" lookup: reverse from start to X+1.
	got, err := kv.Range(context.Background(), p, p+"0105", 1, true)
	if err != nil || len(got) != 1 || got[0].Key != p+"010" {
		t.Fatalf("floor lookup: %+v err=%v", got, err)
	}
	got, err = kv.Range(context.Background(), p, metadata.PrefixEnd(p), 0, true)
	if err != nil || len(got) != 20 || got[0].Key != p+"019" || got[19].Key != p+"000" {
		t.Fatalf("reverse all: %d err=%v", len(got), err)
	}
	got, err = kv.Range(context.Background(), p+"100", metadata.PrefixEnd(p), 1, true)
	if err != nil || len(got) != 0 {
		t.Fatalf("empty reverse: %+v err=%v", got, err)
	}
}

func testDeletePrefix(t *testing.T, kv metadata.KV, p string) {
	putKeys(t, kv, p+"x/", 10)
	mustTxn(t, kv, nil, metadata.Put(p+"y", []byte("keep")))
	mustTxn(t, kv, nil, metadata.DeletePrefix(p+"x/"))
	left, err := kv.Range(context.Background(), p, metadata.PrefixEnd(p), 0, false)
	if err != nil || len(left) != 1 || left[0].Key != p+"y" {
		t.Fatalf("after delete prefix: %+v err=%v", left, err)
	}
}

// testConcurrentCAS increments a counter from many goroutines with
// read-modify-CAS; no increment may be lost.
func testConcurrentCAS(t *testing.T, kv metadata.KV, p string) {
	const workers, each = 8, 10
	key := p + "counter"
	mustTxn(t, kv, nil, metadata.Put(key, []byte{0}))
	var conflicts atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				for attempt := 0; attempt < 1000; attempt++ {
					it, _, err := kv.Get(context.Background(), key)
					if err != nil {
						t.Error(err)
						return
					}
					_, err = kv.Txn(context.Background(), []metadata.Cond{{Key: key, Version: it.Version}},
						[]metadata.Op{metadata.Put(key, []byte{it.Value[0] + 1})})
					if err == nil {
						break
					}
					if !metadata.IsConflict(err) {
						t.Error(err)
						return
					}
					conflicts.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if v := mustGet(t, kv, key).Value[0]; v != workers*each {
		t.Fatalf("counter = %d, want %d (lost updates)", v, workers*each)
	}
	t.Logf("%d CAS conflicts retried", conflicts.Load())
}
