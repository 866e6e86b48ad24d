package txncoord

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestVerifyGroup: a group coordinator's check of a TxnOffsetCommit. The
// group's offsets partition (GroupPartition) is in the transaction only
// while it is Ongoing and has added the group with AddOffsets; the
// producer checks are those of every transactional call, and a VerifyOnly
// AddPartitions (how a remote coordinator is asked) answers the same.
func TestVerifyGroup(t *testing.T) {
	e := newEnv(t)
	c := e.open()
	ctx := context.Background()
	const id = "tx"
	p := initID(t, c, id)
	other := otherShardGroup(t, "g")
	verify := func(pid int64, epoch int16, group string) error {
		return c.Verify(ctx, id, pid, epoch, GroupPartition(group))
	}
	wantErr(t, "no transaction", verify(p.ProducerID, p.ProducerEpoch, "g"), kerr.InvalidTxnState)
	wantErr(t, "add a partition", addParts(c, id, p, tp("t", 0)), nil)
	wantErr(t, "an ongoing transaction without the group", verify(p.ProducerID, p.ProducerEpoch, "g"), kerr.InvalidTxnState)
	wantErr(t, "add offsets", c.AddOffsets(ctx, id, p.ProducerID, p.ProducerEpoch, "g"), nil)
	wantErr(t, "the group added", verify(p.ProducerID, p.ProducerEpoch, "g"), nil)
	wantErr(t, "a group on another shard", verify(p.ProducerID, p.ProducerEpoch, other), kerr.InvalidTxnState)
	wantErr(t, "another producer id", verify(p.ProducerID+1, p.ProducerEpoch, "g"), kerr.InvalidProducerIDMapping)
	wantErr(t, "an old epoch", verify(p.ProducerID, p.ProducerEpoch-1, "g"), kerr.ProducerFenced)
	wantErr(t, "an unknown transactional id", c.Verify(ctx, "nobody", p.ProducerID, p.ProducerEpoch, GroupPartition("g")), kerr.InvalidProducerIDMapping)
	wantErr(t, "a partition named like the group's of another topic",
		c.Verify(ctx, id, p.ProducerID, p.ProducerEpoch, tp("t", GroupPartition("g").Partition)), kerr.InvalidTxnState)

	errs, err := c.AddPartitions(ctx, AddPartitionsRequest{TransactionalID: id, ProducerID: p.ProducerID, ProducerEpoch: p.ProducerEpoch,
		Partitions: []TopicPartition{GroupPartition("g"), GroupPartition(other)}, VerifyOnly: true})
	if err != nil || errs[GroupPartition("g")] != nil {
		t.Fatalf("verify only: %v, %v", errs, err)
	}
	wantErr(t, "verify only, a group on another shard", errs[GroupPartition(other)], kerr.InvalidTxnState)

	e.markers.setBlocked(true)
	wantErr(t, "commit", c.EndTxn(ctx, id, p.ProducerID, p.ProducerEpoch, true), nil)
	wantErr(t, "while the markers are written", verify(p.ProducerID, p.ProducerEpoch, "g"), kerr.ConcurrentTransactions)
	e.markers.setBlocked(false)
	waitState(t, c, id, CompleteCommit)
	wantErr(t, "after the commit", verify(p.ProducerID, p.ProducerEpoch, "g"), kerr.InvalidTxnState)

	wantErr(t, "next transaction, a partition only", addParts(c, id, p, tp("t", 0)), nil)
	wantErr(t, "the group of the last transaction", verify(p.ProducerID, p.ProducerEpoch, "g"), kerr.InvalidTxnState)
}

// otherShardGroup returns a group id whose shard is not group's.
func otherShardGroup(t *testing.T, group string) string {
	t.Helper()
	for i := range Shards * 4 {
		if g := fmt.Sprintf("other-%d", i); ShardOf(g) != ShardOf(group) {
			return g
		}
	}
	t.Fatalf("no group id on another shard than %q's", group)
	return ""
}

// TestGroupPartition: the offsets partition of a group is Kafka's name
// for it, on the group's coordinator shard.
func TestGroupPartition(t *testing.T) {
	for _, g := range []string{"g", "a-group", ""} {
		if got := GroupPartition(g); got.Topic != "__consumer_offsets" || got.Partition != ShardOf(g) || got.Partition < 0 || got.Partition >= Shards {
			t.Errorf("GroupPartition(%q) = %+v", g, got)
		}
	}
}
