package etcdtest

import (
	"context"
	"log/slog"
	"testing"

	"github.com/sediment-io/sediment/metadata/etcdkv"
)

// OpenKV opens an etcd KV on the member at endpoint with every key under
// prefix, quiet; the test's cleanup closes it. Each call is a client of
// its own, as each broker of a cluster has.
func OpenKV(t testing.TB, endpoint, prefix string) *etcdkv.KV {
	t.Helper()
	cfg, err := etcdkv.ParseURL("etcd://" + endpoint + "/" + prefix)
	if err != nil {
		t.Fatalf("etcdtest: %v", err)
	}
	kv, err := etcdkv.Open(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("etcdtest: %v", err)
	}
	t.Cleanup(func() { kv.Close() }) // a second Close, after the test's own, only errs
	return kv
}
