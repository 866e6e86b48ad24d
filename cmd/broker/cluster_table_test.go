package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sediment-io/sediment/cluster"
	"github.com/sediment-io/sediment/metadata"
)

// TestClusterTableTopic: two brokers on one etcd and one SQLite catalog
// file (both on this machine) convert a table topic whose partitions both
// own: exactly one holds its table slot, every record is in the table
// once; when that broker is killed the other takes the slot over and
// converts what follows, and still no record is in the table twice.
func TestClusterTableTopic(t *testing.T) {
	c, cat := startTableCluster(t, 2)
	createTableTopic(t, c.addrs(1)[0], "events", 4, nil)
	produceValues(t, c.addrs(1)[0], "events", 4, numbered(0, 40))
	checkOnce(t, waitTableRows(t, cat, "events", 40), 40)
	holder := c.tableHolder()
	other := int32(3) - holder
	c.kill(holder)
	produceValues(t, c.addrs(other)[0], "events", 4, numbered(40, 80))
	checkOnce(t, waitTableRows(t, cat, "events", 80), 80)
	if now := c.tableHolder(); now != other {
		t.Fatalf("the table slot is held by node %d, want %d", now, other)
	}
}

// tableHolder waits until exactly one table slot is held, and returns its
// holder.
func (c *testCluster) tableHolder() int32 {
	c.t.Helper()
	var holder int32
	c.waitFor(time.Minute, "one broker holds the table slot", func(ctx context.Context) (bool, string) {
		resp, err := c.cli.Get(ctx, c.prefix+"/"+cluster.TableOwnerPrefix, clientv3.WithPrefix())
		if err != nil {
			return false, err.Error()
		}
		if len(resp.Kvs) != 1 {
			return false, fmt.Sprintf("%d table slots held", len(resp.Kvs))
		}
		var r metadata.OwnerRecord
		if err := json.Unmarshal(resp.Kvs[0].Value, &r); err != nil {
			return false, err.Error()
		}
		holder = r.NodeID
		return true, ""
	})
	return holder
}

// checkOnce fails unless rows are the records numbered 0..n-1, each once.
func checkOnce(t *testing.T, rows []tableRow, n int) {
	t.Helper()
	seen := map[[2]int64]bool{}
	values := map[float64]bool{}
	for _, r := range rows {
		p, off := r.partOff()
		key := [2]int64{int64(p), off}
		if seen[key] {
			t.Fatalf("partition %d offset %d is in the table twice", p, off)
		}
		seen[key] = true
		v, _ := r["n"].(float64)
		values[v] = true
	}
	if len(seen) != n || len(values) != n {
		t.Fatalf("%d records in the table with %d distinct values, want %d", len(seen), len(values), n)
	}
}
