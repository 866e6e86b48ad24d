package etcdkv_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

// TestEtcdOverlappingWrites: transactions whose ops touch one key twice,
// which etcd itself refuses, leave the same keys and values on etcd as on
// bbolt, which applies ops in order.
func TestEtcdOverlappingWrites(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	put, del, delp := metadata.Put, metadata.Delete, metadata.DeletePrefix
	v := func(s string) []byte { return []byte(s) }
	cases := [][]metadata.Op{
		{put("a", v("1")), put("a", v("2"))},
		{put("x/1", v("1")), delp("x/")},
		{delp("x/"), put("x/1", v("new"))},
		{delp("x/"), put("x/", v("at the prefix")), put("x/9", v("9"))},
		{del("x/1"), put("x/1", v("again")), del("x/1")},
		{delp("x/"), delp("x/1"), put("x/10", v("10")), del("y")},
		{put("y", v("y")), delp(""), put("z", v("z"))},
	}
	for i, ops := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			bolt, err := metadata.OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer bolt.Close()
			etcd := etcdtest.OpenKV(t, endpoint, fmt.Sprintf("overlap-%d", i))
			var got [2][]string
			for j, kv := range []metadata.KV{bolt, etcd} {
				seed := []metadata.Op{put("x/1", v("old")), put("x/2", v("old")), put("x/10", v("old")), put("y", v("old"))}
				if _, err := kv.Txn(context.Background(), nil, seed); err != nil {
					t.Fatal(err)
				}
				if _, err := kv.Txn(context.Background(), nil, ops); err != nil {
					t.Fatalf("backend %d: %v", j, err)
				}
				got[j] = dump(t, kv)
			}
			if !reflect.DeepEqual(got[0], got[1]) {
				t.Fatalf("bbolt left %q, etcd left %q", got[0], got[1])
			}
		})
	}
}

func dump(t *testing.T, kv metadata.KV) []string {
	items, err := kv.Range(context.Background(), "", "\xff", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range items {
		out = append(out, it.Key+"="+string(it.Value))
	}
	return out
}

// TestEtcdLimits: a transaction over etcd's default limits is refused
// before it is sent, with an error naming the limit, and writes nothing;
// one at the limits is accepted by a real etcd with its default settings.
func TestEtcdLimits(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	kv := etcdtest.OpenKV(t, endpoint, "limits")
	ctx := context.Background()
	puts := func(n int) []metadata.Op {
		ops := make([]metadata.Op, n)
		for i := range ops {
			ops[i] = metadata.Put(fmt.Sprintf("k%03d", i), []byte("v"))
		}
		return ops
	}
	conds := func(n int) []metadata.Cond {
		cs := make([]metadata.Cond, n)
		for i := range cs {
			cs[i] = metadata.Cond{Key: fmt.Sprintf("c%03d", i)}
		}
		return cs
	}
	big := func(n int) []metadata.Op { return []metadata.Op{metadata.Put("big", make([]byte, n))} }
	for _, tc := range []struct {
		name  string
		conds []metadata.Cond
		ops   []metadata.Op
		limit string
	}{
		{"129 writes", nil, puts(129), "--max-txn-ops"},
		{"129 conditions", conds(129), puts(1), "--max-txn-ops"},
		{"1.5 MiB value", nil, big(1536 * 1024), "--max-request-bytes"},
	} {
		_, err := kv.Txn(ctx, tc.conds, tc.ops)
		if !errors.Is(err, etcdkv.ErrLimit) || !strings.Contains(err.Error(), tc.limit) || metadata.IsUncertain(err) {
			t.Fatalf("%s: err=%v, want ErrLimit naming %s", tc.name, err, tc.limit)
		}
	}
	if items := dump(t, kv); len(items) != 0 {
		t.Fatalf("a refused transaction wrote %d keys", len(items))
	}
	if _, err := kv.Txn(ctx, conds(128), puts(128)); err != nil {
		t.Fatalf("128 conditions and 128 writes: %v", err)
	}
	if _, err := kv.Txn(ctx, nil, big(1536*1024-4096)); err != nil {
		t.Fatalf("a value just under 1.5 MiB: %v", err)
	}
}

// TestEtcdUncertain: a transaction that cannot reach etcd before its
// deadline has an unknown outcome; one whose context ended before it was
// sent, and a lost compare, do not.
func TestEtcdUncertain(t *testing.T) {
	endpoint, stop := etcdtest.Start(t)
	kv := etcdtest.OpenKV(t, endpoint, "uncertain")
	ops := []metadata.Op{metadata.Put("k", []byte("v"))}
	if _, err := kv.Txn(context.Background(), nil, ops); err != nil {
		t.Fatal(err)
	}
	_, err := kv.Txn(context.Background(), []metadata.Cond{{Key: "k"}}, ops)
	if !metadata.IsConflict(err) || metadata.IsUncertain(err) {
		t.Fatalf("lost compare: err=%v", err)
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := kv.Txn(canceled, nil, ops); err == nil || metadata.IsUncertain(err) {
		t.Fatalf("context ended before sending: err=%v, want a certain failure", err)
	}
	stop()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := kv.Txn(ctx, nil, ops); !metadata.IsUncertain(err) {
		t.Fatalf("etcd gone: err=%v, want ErrUncertain", err)
	}
}
