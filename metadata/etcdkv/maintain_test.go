package etcdkv_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

// TestMaintainCompactsHistory: the maintainer compacts etcd's history (a
// read at the revision of an early write is refused as compacted, where
// without it etcd would keep every revision) and sets the db size gauge.
func TestMaintainCompactsHistory(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	kv := etcdtest.OpenKV(t, endpoint, "maintain")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first, err := kv.Txn(ctx, nil, []metadata.Op{metadata.Put("k", []byte("1"))})
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	reg := prometheus.NewRegistry()
	done := make(chan struct{})
	go func() {
		defer close(done)
		kv.Maintain(ctx, etcdkv.MaintainOptions{Every: 20 * time.Millisecond, Registry: reg})
	}()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for compacted := false; !compacted; {
		if _, err := kv.Txn(ctx, nil, []metadata.Op{metadata.Put("k", []byte("more"))}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-deadline:
			t.Fatal("the revision of the first write is still readable: history never compacted")
		case <-tick.C:
		}
		_, err := cli.Get(ctx, "maintain/k", clientv3.WithRev(first))
		compacted = err != nil
	}
	cancel()
	<-done
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var size float64
	for _, mf := range mfs {
		if mf.GetName() == "sediment_etcd_db_size_bytes" {
			size = mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	if size <= 0 {
		t.Errorf("sediment_etcd_db_size_bytes = %v, want the database size", size)
	}
}
