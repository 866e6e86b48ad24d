// Package txncoord is Kafka's transaction coordinator (transaction version
// 1: KIP-98 with KIP-360 and KIP-447; explicit AddPartitionsToTxn and
// AddOffsetsToTxn). It owns one durable record per transactional id:
// its producer id and epoch, the previous ones (for a KIP-360 retry of
// InitProducerId), its timeout, its state and the partitions and groups
// of the open transaction.
//
// Transactional ids are spread over the same 64 coordinator shards as
// consumer groups (ShardOf == metadata.GroupShard), and a shard is owned,
// fenced and moved exactly like a group coordinator shard: every write of
// a shard's records is a compare-and-swap on the record's version that
// also carries the shard's fence, so a coordinator that lost its shard
// can write nothing. Each acquisition of a shard raises the shard's
// coordinator epoch, which goes into every marker so that partitions
// refuse the markers of a stale coordinator.
//
// A record is durable before InitProducerID, AddPartitions, AddOffsets
// and EndTxn answer. EndTxn stores PrepareCommit or PrepareAbort, answers,
// then has the markers written (Markers, retried until they are durable
// or the shard is lost) and only then stores CompleteCommit or
// CompleteAbort. A coordinator that acquires a shard resumes every
// Prepare* transaction of it; an Ongoing one keeps its timeout.
//
// Verify answers whether a partition is in the Ongoing transaction: a
// partition leader asks before the first transactional batch of a
// producer (KIP-890 part 1), and a group coordinator before a
// TxnOffsetCommit, naming the group's offsets partition (GroupPartition),
// which the transaction holds once AddOffsets added the group.
//
// The package reaches partitions and groups only through Markers; it
// never imports the protocol or the partition layer.
package txncoord
