package protocol

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/txncoord"
)

// TestTxnOffsetCommitVerified: as in Kafka 3.6+, TxnOffsetCommit is
// checked with the transaction coordinator first. Without AddOffsetsToTxn
// for the group, with another producer id, or after the transaction ended,
// it is refused and leaves no pending offset (which no marker would ever
// complete); after AddOffsetsToTxn it commits with the transaction.
func TestTxnOffsetCommitVerified(t *testing.T) {
	t.Parallel()
	b := startGroupBroker(t)
	b.createTopic("tx", 1, nil)
	c := b.dial()
	p := newTxnProducer(t, b, "verified")
	refused := func(what string, codes []int16, want int16) {
		t.Helper()
		wantCodes(t, what, codes, want)
		if got := fetchStable(t, c, "g", "tx", 0); got != "-1" {
			t.Fatalf("%s: offsets of g afterwards %s, want none and none pending", what, got)
		}
	}
	for _, v := range []int16{0, 2, 3, 4} {
		refused(fmt.Sprintf("v%d with no transaction", v), p.commitOffsets(v, "g", "", -1, "tx", 3, 0), kerr.InvalidTxnState.Code)
	}
	p.addPartitions("tx", 0)
	p.mustProduce("tx", 0, 1)
	refused("before AddOffsetsToTxn", p.commitOffsets(3, "g", "", -1, "tx", 3, 0), kerr.InvalidTxnState.Code)
	wantCode(t, "AddOffsetsToTxn of another group", p.addOffsets(3, otherShardGroup(t, "g")), 0)
	refused("with another group added", p.commitOffsets(3, "g", "", -1, "tx", 3, 0), kerr.InvalidTxnState.Code)

	wantCode(t, "AddOffsetsToTxn", p.addOffsets(3, "g"), 0)
	other := &txnProducer{t: t, c: c, id: p.id, pid: p.pid + 1, epoch: p.epoch}
	refused("with another producer id", other.commitOffsets(3, "g", "", -1, "tx", 3, 0), kerr.InvalidProducerIDMapping.Code)
	wantCodes(t, "TxnOffsetCommit", p.commitOffsets(3, "g", "", -1, "tx", 5, 0), 0)
	if got := fetchStable(t, c, "g", "tx", 0); got != "UNSTABLE_OFFSET_COMMIT" {
		t.Fatalf("require_stable with the offset pending: %s", got)
	}
	p.finish(true)
	if got := fetchStable(t, c, "g", "tx", 0); got != "5" {
		t.Fatalf("offsets after the commit: %s", got)
	}
	wantCodes(t, "TxnOffsetCommit after EndTxn", p.commitOffsets(3, "g", "", -1, "tx", 9, 0), kerr.InvalidTxnState.Code)
	if got := fetchStable(t, c, "g", "tx", 0); got != "5" {
		t.Fatalf("offsets after a refused commit: %s, want 5 and none pending", got)
	}
}

// otherShardGroup returns a group id whose coordinator shard is not
// group's.
func otherShardGroup(t *testing.T, group string) string {
	t.Helper()
	for i := range txncoord.Shards * 4 {
		if g := fmt.Sprintf("other-%d", i); txncoord.ShardOf(g) != txncoord.ShardOf(group) {
			return g
		}
	}
	t.Fatalf("no group id on another shard than %q's", group)
	return ""
}

// TestTxnOffsetCommitRemoteVerify: TxnOffsetCommit asks Config.TxnVerify
// (in a cluster, another broker may coordinate the transaction) about the
// group's offsets partition, and answers its errors as Kafka's group
// coordinator does, committing nothing unless it says yes.
func TestTxnOffsetCommitRemoteVerify(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var calls []txncoord.TopicPartition
	answer := error(kerr.InvalidTxnState)
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
	b := startBroker(t, withBrokerConfig("group.initial.rebalance.delay.ms", "0"), func(s *brokerSetup) { s.cfg.TxnVerify = verify })
	b.createTopic("tx", 1, nil)
	c := b.dial()
	p := &txnProducer{t: t, c: c, id: "remote", pid: 77, epoch: 3, seq: map[string]int32{}}
	for _, tc := range []struct {
		answer  error
		version int16
		want    int16
	}{
		{kerr.InvalidTxnState, 3, kerr.InvalidTxnState.Code},
		{kerr.InvalidProducerIDMapping, 3, kerr.InvalidProducerIDMapping.Code},
		{kerr.ProducerFenced, 3, kerr.InvalidProducerEpoch.Code},
		{kerr.ProducerFenced, 0, kerr.InvalidProducerEpoch.Code},
		{kerr.ConcurrentTransactions, 3, kerr.ConcurrentTransactions.Code},
		{kerr.NotCoordinator, 3, kerr.NotCoordinator.Code},
		{kerr.CoordinatorNotAvailable, 3, kerr.CoordinatorNotAvailable.Code},
		{kerr.NetworkException, 3, kerr.CoordinatorLoadInProgress.Code},
		{kerr.NetworkException, 1, kerr.CoordinatorNotAvailable.Code},
		{kerr.NotLeaderForPartition, 3, kerr.NotCoordinator.Code},
		{kerr.RequestTimedOut, 3, kerr.CoordinatorNotAvailable.Code},
		{fmt.Errorf("asking node 2: %w", kerr.CoordinatorNotAvailable), 3, kerr.CoordinatorNotAvailable.Code},
		{errors.New("connection refused"), 3, kerr.CoordinatorNotAvailable.Code},
	} {
		set(tc.answer)
		wantCodes(t, fmt.Sprintf("v%d verified with %v", tc.version, tc.answer), p.commitOffsets(tc.version, "g", "", -1, "tx", 3, 0), tc.want)
		if got := fetchStable(t, c, "g", "tx", 0); got != "-1" {
			t.Fatalf("offsets of g after a refused verification: %s", got)
		}
	}
	set(nil)
	wantCodes(t, "verified", p.commitOffsets(3, "g", "", -1, "tx", 3, 0), 0)
	if got := fetchStable(t, c, "g", "tx", 0); got != "UNSTABLE_OFFSET_COMMIT" {
		t.Fatalf("require_stable after a verified commit: %s", got)
	}
	// Neither an unknown partition nor an empty group id is verified.
	wantCodes(t, "unknown partition", p.commitOffsets(3, "g", "", -1, "tx", 3, 7), kerr.UnknownTopicOrPartition.Code)
	wantCodes(t, "empty group id", p.commitOffsets(3, "", "", -1, "tx", 3, 0), kerr.InvalidGroupID.Code)
	mu.Lock()
	defer mu.Unlock()
	want := txncoord.TopicPartition{Topic: "__consumer_offsets", Partition: txncoord.ShardOf("g")}
	if len(calls) != 14 || calls[0] != want || calls[13] != want {
		t.Fatalf("verifier called %d times (%v), want 14 for %v", len(calls), calls, want)
	}
}

// TestAddPartitionsVerifyGroup: AddPartitionsToTxn v4 VerifyOnly, which
// a group coordinator on another broker sends, verifies a group's offsets
// partition (__consumer_offsets, the group's shard) although no log holds
// it; a client cannot add that partition.
func TestAddPartitionsVerifyGroup(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("tx", 1, nil)
	p := newTxnProducer(t, b, "verify-group")
	shard := txncoord.ShardOf("g")
	verifyOnly := func(parts ...int32) []int16 {
		t.Helper()
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.Version = 4
		req.Transactions = []kmsg.AddPartitionsToTxnRequestTransaction{{TransactionalID: p.id, ProducerID: p.pid, ProducerEpoch: p.epoch,
			VerifyOnly: true, Topics: []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: "__consumer_offsets", Partitions: parts}}}}
		resp := roundTrip[*kmsg.AddPartitionsToTxnResponse](p.c, req)
		wantCode(t, "AddPartitionsToTxn v4", resp.ErrorCode, 0)
		var out []int16
		for _, tx := range resp.Transactions {
			for _, rt := range tx.Topics {
				for _, rp := range rt.Partitions {
					out = append(out, rp.ErrorCode)
				}
			}
		}
		return out
	}
	wantCodes(t, "verify before AddOffsetsToTxn", verifyOnly(shard), kerr.InvalidTxnState.Code)
	wantCode(t, "AddOffsetsToTxn", p.addOffsets(3, "g"), 0)
	wantCodes(t, "verify after AddOffsetsToTxn", verifyOnly(shard), 0)
	wantCodes(t, "verify a shard out of range", verifyOnly(txncoord.Shards), kerr.UnknownTopicOrPartition.Code)
	wantCodes(t, "a client adds the offsets partition", p.addPartitionsCodes(3, "__consumer_offsets", shard), kerr.UnknownTopicOrPartition.Code)
	p.finish(false)
	wantCodes(t, "verify after EndTxn", verifyOnly(shard), kerr.InvalidTxnState.Code)
}
