package main

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestClusterTableTxn: the table converter of a cluster reads the
// partitions other brokers own as a read_committed consumer: of a
// transactional producer's records, those of committed transactions are
// in the table once, those of an aborted transaction and of one open while
// the converter ran (and aborted later) never.
func TestClusterTableTxn(t *testing.T) {
	c, cat := startTableCluster(t, 2)
	seeds := c.addrs()
	const parts = 4
	createTableTopic(t, seeds[0], "ledger", parts, nil)
	owners := c.waitOwned("ledger", parts, nil)
	holder := c.tableHolder()
	remote := 0
	for _, o := range owners {
		if o.Node != holder {
			remote++
		}
	}
	if remote == 0 {
		t.Fatalf("node %d converts the table and owns every partition (%v): no replica read to test", holder, owners)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	prod := txnProducer(t, seeds, "ledger-txn")
	produce := func(vals []string) {
		for i, v := range vals {
			produceOne(t, ctx, prod, "ledger", int32(i%parts), v)
		}
	}
	txn := func(vals []string, end kgo.TransactionEndTry) {
		must(t, "begin", prod.BeginTransaction())
		produce(vals)
		must(t, "end", prod.EndTransaction(ctx, end))
	}
	txn(numbered(0, 20), kgo.TryCommit)
	txn(numbered(100, 120), kgo.TryAbort)
	must(t, "begin", prod.BeginTransaction())
	produce(numbered(200, 208)) // open while the converter reads
	rows := waitTableRows(t, cat, "ledger", 20)
	checkTableNumbered(t, rows, 0, 20)
	must(t, "abort the open transaction", prod.EndTransaction(ctx, kgo.TryAbort))
	txn(numbered(20, 40), kgo.TryCommit)
	// The converter reads each partition in offset order: once the last
	// committed records are in, it has gone past the aborted ones.
	checkTableNumbered(t, waitTableRows(t, cat, "ledger", 40), 0, 40)
	t.Logf("node %d converted; %d of %d partitions owned by the other", holder, remote, parts)
}

// checkTableNumbered fails unless rows hold exactly the records numbered
// from..to-1 (numbered), each once.
func checkTableNumbered(t *testing.T, rows []tableRow, from, to int) {
	t.Helper()
	checkOnce(t, rows, len(rows))
	for _, r := range rows {
		if n, _ := r["n"].(float64); int(n) < from || int(n) >= to {
			t.Fatalf("record %v in the table; want only %d..%d", r["n"], from, to-1)
		}
	}
	if len(rows) != to-from {
		t.Fatalf("%d records in the table, want %d", len(rows), to-from)
	}
}
