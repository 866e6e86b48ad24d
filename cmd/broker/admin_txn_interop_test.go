//go:build interop

package main

import (
	"context"
	"testing"
	"time"

	"github.com/sediment-io/sediment/interop/jvm"
)

// TestInteropAdminTransactionsApacheKafka runs the golden suite of `broker
// transactions` and `broker producers` (admin_txn_test.go) against the
// reference Apache Kafka: the files Sediment's output is compared with are
// what Kafka answers.
func TestInteropAdminTransactionsApacheKafka(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	k, err := jvm.StartKafka(ctx, javaClasspath(t), jvm.KafkaOptions{Dir: t.TempDir(), Heap: "512m", StartTimeout: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	adminTxnSuite(t, &adminCluster{name: "kafka", addr: k.Addr, tokens: map[string]string{k.Addr: "<broker>"}})
}
