package etcdkv_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
	"github.com/sediment-io/sediment/metadata/kvtest"
)

// openKV opens a KV on endpoint under a prefix of its own, closed with t.
func openKV(t *testing.T, endpoint, prefix string) *etcdkv.KV {
	t.Helper()
	cfg, err := etcdkv.ParseURL("etcd://" + endpoint + "/" + prefix)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := etcdkv.Open(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kv.Close() })
	return kv
}

func TestEtcdKVConformance(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	var n atomic.Int64
	kvtest.Run(t, func(t *testing.T) metadata.KV {
		return openKV(t, endpoint, fmt.Sprintf("conformance-%d", n.Add(1)))
	})
}
