package protocol

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sediment-io/sediment/txncoord"
)

// TestProduceTxnVerify: a transactional batch is verified with
// Config.TxnVerify (the coordinator may be another broker) only while its
// producer has no transaction open in the partition, and the verifier's
// answers reach the producer as Kafka's ReplicaManager maps them.
func TestProduceTxnVerify(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var calls []txncoord.TopicPartition
	answer := error(kerr.ConcurrentTransactions)
	verify := func(_ context.Context, txnID string, pid int64, epoch int16, tp txncoord.TopicPartition) error {
		mu.Lock()
		defer mu.Unlock()
		if txnID != "remote" || pid != 77 || epoch != 3 {
			t.Errorf("verify %s %d/%d", txnID, pid, epoch)
		}
		calls = append(calls, tp)
		return answer
	}
	set := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		answer = err
	}
	b := startBroker(t, func(s *brokerSetup) { s.cfg.TxnVerify = verify })
	b.createTopic("tx", 1, nil)
	p := &txnProducer{t: t, c: b.dial(), id: "remote", pid: 77, epoch: 3, seq: map[string]int32{}}
	for _, tc := range []struct {
		answer error
		want   int16
	}{
		{kerr.ConcurrentTransactions, kerr.NotEnoughReplicas.Code},
		{kerr.NotCoordinator, kerr.NotEnoughReplicas.Code},
		{context.DeadlineExceeded, kerr.NotEnoughReplicas.Code},
		{kerr.ProducerFenced, kerr.InvalidProducerEpoch.Code},
		{kerr.InvalidTxnState, kerr.InvalidTxnState.Code},
		{kerr.InvalidProducerIDMapping, kerr.InvalidProducerIDMapping.Code},
		{nil, 0},
	} {
		set(tc.answer)
		wantCode(t, fmt.Sprint("produce verified with ", tc.answer), p.produce("tx", 0, 1).ErrorCode, tc.want)
	}
	set(kerr.InvalidTxnState) // the transaction is open in the partition now: no question asked
	p.mustProduce("tx", 0, 1)
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 7 || calls[0] != (txncoord.TopicPartition{Topic: "tx", Partition: 0}) {
		t.Fatalf("verifier called %d times (%v), want 7 for tx-0", len(calls), calls)
	}
}
