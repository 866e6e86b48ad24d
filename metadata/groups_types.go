package metadata

import (
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"strconv"
	"strings"
)

// ErrGroupMissing is returned by WriteGroups for offsets of a group that has
// no stored record: offsets never outlive their group.
var ErrGroupMissing = errors.New("metadata: offsets written for a group with no record")

// GroupRecord is a consumer group's durable state as of its last completed
// generation (or of the moment it became empty). Members are stored with
// every protocol they offered and their assignment, so that a restarted
// coordinator can resume a stable group without a rebalance.
type GroupRecord struct {
	ProtocolType string `json:"protocol_type"`
	Protocol     string `json:"protocol,omitempty"`
	Generation   int32  `json:"generation"`
	Leader       string `json:"leader,omitempty"`
	// StateMs is when the group entered its current state; an empty
	// group's offsets expire offsets.retention.minutes after it.
	StateMs int64               `json:"state_ms"`
	Members []GroupMemberRecord `json:"members,omitempty"`
}

// GroupMemberRecord is one member of a stored generation.
type GroupMemberRecord struct {
	MemberID           string          `json:"member_id"`
	InstanceID         *string         `json:"instance_id,omitempty"`
	ClientID           string          `json:"client_id"`
	ClientHost         string          `json:"client_host"`
	SessionTimeoutMs   int32           `json:"session_timeout_ms"`
	RebalanceTimeoutMs int32           `json:"rebalance_timeout_ms"`
	Protocols          []GroupProtocol `json:"protocols"`
	Assignment         []byte          `json:"assignment,omitempty"`
}

// GroupProtocol is one protocol a member offered, with its metadata.
type GroupProtocol struct {
	Name     string `json:"name"`
	Metadata []byte `json:"metadata,omitempty"`
}

// CommittedOffset is one partition's committed offset. TopicID is the id
// the topic had at commit time: an offset whose topic was deleted (or
// deleted and created again) is stale and never served.
type CommittedOffset struct {
	TopicID     TopicID `json:"topic_id"`
	Offset      int64   `json:"offset"`
	LeaderEpoch int32   `json:"leader_epoch"`
	Metadata    string  `json:"metadata,omitempty"`
	CommitMs    int64   `json:"commit_ms"`
}

// GroupPartition names a partition by topic name, as offsets are keyed.
type GroupPartition struct {
	Topic     string
	Partition int32
}

// PendingOffset is one offset committed inside an open transaction
// (TxnOffsetCommit), kept apart from the committed offsets until the
// transaction commits (it then becomes one) or aborts (it is dropped).
type PendingOffset struct {
	CommittedOffset
	ProducerEpoch int16 `json:"producer_epoch"`
}

// StoredGroup is a group as LoadGroups finds it.
type StoredGroup struct {
	ID      string
	Record  GroupRecord
	Version int64 // KV version of the record
	Offsets map[GroupPartition]CommittedOffset
	// TxnOffsets are the offsets pending in open transactions, by producer
	// id (nil: none).
	TxnOffsets map[int64]map[GroupPartition]PendingOffset
}

// GroupWrite is one change to one group, applied by WriteGroups in order
// with others: a new record, the deletion of the group and its offsets,
// and offsets to store or delete, committed or pending in a transaction.
// Its parts apply in the order of the fields, all or none: a transaction's
// commit stores its offsets and deletes them from the pending ones in one
// change.
type GroupWrite struct {
	Group string
	// Delete removes the group's record and every offset it has, pending
	// ones included.
	Delete bool
	// Record, when set, replaces the group's record.
	Record *GroupRecord
	// DropTxn deletes every pending offset of these producers.
	DropTxn []int64
	Offsets []OffsetWrite
	// TxnOffsets store or delete pending offsets.
	TxnOffsets []TxnOffsetWrite
}

// OffsetWrite stores (Offset set) or deletes (Offset nil) one committed
// offset.
type OffsetWrite struct {
	GroupPartition
	Offset *CommittedOffset
}

// TxnOffsetWrite stores (Offset set) or deletes (Offset nil) one offset
// pending in producer ProducerID's open transaction.
type TxnOffsetWrite struct {
	ProducerID int64
	GroupPartition
	Offset *PendingOffset
}

// groupOwnerKey is the one-node coordinator's fence: it is rewritten by
// every coordinator that takes over the groups (ClaimGroups), and every
// group write of a one-node coordinator is conditional on it. A cluster
// fences each shard with its own key instead.
const groupOwnerKey = "groupcoord/owner"

// GroupShards is the number of coordinator shards consumer groups are
// spread over. Frozen: it is part of the key layout.
const GroupShards = 64

// GroupShard returns the coordinator shard of a group: FNV-1a 32 of its
// id, mod GroupShards. Frozen, like GroupShards.
func GroupShard(id string) int32 {
	h := fnv.New32a()
	h.Write([]byte(id))
	return int32(h.Sum32() % GroupShards)
}

// escapeGroup makes a group id safe as one key segment: group ids are any
// string, and a '/' in one must not make it a prefix of another's keys.
func escapeGroup(id string) string { return url.PathEscape(id) }

// shardSegment is the shard component of the group keys.
func shardSegment(shard int32) string { return fmt.Sprintf("%03d", shard) }

func groupShardPrefix(shard int32) string { return "groups/" + shardSegment(shard) + "/" }

func offsetShardPrefix(shard int32) string { return "offsets/" + shardSegment(shard) + "/" }

// txnOffsetShardPrefix is where a shard's pending transactional offsets
// are: txnoffsets/<shard %03d>/<group-id, path-escaped>/<producer id
// %019d>/<topic>/<partition %010d> holds a PendingOffset. They are one
// range per shard, read with the shard's groups and offsets, and one
// prefix per (group, producer), which a transaction's abort deletes.
func txnOffsetShardPrefix(shard int32) string { return "txnoffsets/" + shardSegment(shard) + "/" }

func groupTxnOffsetsPrefix(id string) string {
	return txnOffsetShardPrefix(GroupShard(id)) + escapeGroup(id) + "/"
}

func producerTxnOffsetsPrefix(id string, pid int64) string {
	return fmt.Sprintf("%s%019d/", groupTxnOffsetsPrefix(id), pid)
}

func txnOffsetKey(id string, pid int64, tp GroupPartition) string {
	return fmt.Sprintf("%s%s/%010d", producerTxnOffsetsPrefix(id, pid), tp.Topic, tp.Partition)
}

func groupKey(id string) string { return groupShardPrefix(GroupShard(id)) + escapeGroup(id) }

func groupOffsetsPrefix(id string) string {
	return offsetShardPrefix(GroupShard(id)) + escapeGroup(id) + "/"
}

func offsetKey(id string, tp GroupPartition) string {
	return fmt.Sprintf("%s%s/%010d", groupOffsetsPrefix(id), tp.Topic, tp.Partition)
}

// parseGroupKey returns the group id of groups/<shard>/<group>.
func parseGroupKey(key string) (string, error) {
	parts := strings.Split(key, "/")
	if len(parts) != 3 || parts[0] != "groups" {
		return "", fmt.Errorf("metadata: malformed group key %q", key)
	}
	id, err := url.PathUnescape(parts[2])
	if err != nil {
		return "", fmt.Errorf("metadata: group key %q: %w", key, err)
	}
	return id, nil
}

// parseOffsetKey splits offsets/<shard>/<group>/<topic>/<partition>.
// Topic names never hold '/'.
func parseOffsetKey(key string) (string, GroupPartition, error) {
	parts := strings.Split(key, "/")
	if len(parts) != 5 || parts[0] != "offsets" {
		return "", GroupPartition{}, fmt.Errorf("metadata: malformed offset key %q", key)
	}
	group, err := url.PathUnescape(parts[2])
	if err != nil {
		return "", GroupPartition{}, fmt.Errorf("metadata: offset key %q: %w", key, err)
	}
	p, err := strconv.ParseInt(parts[4], 10, 32)
	if err != nil {
		return "", GroupPartition{}, fmt.Errorf("metadata: offset key %q: %w", key, err)
	}
	return group, GroupPartition{Topic: parts[3], Partition: int32(p)}, nil
}

// parseTxnOffsetKey splits
// txnoffsets/<shard>/<group>/<producer id>/<topic>/<partition>.
func parseTxnOffsetKey(key string) (string, int64, GroupPartition, error) {
	parts := strings.Split(key, "/")
	if len(parts) != 6 || parts[0] != "txnoffsets" {
		return "", 0, GroupPartition{}, fmt.Errorf("metadata: malformed pending offset key %q", key)
	}
	group, err := url.PathUnescape(parts[2])
	if err != nil {
		return "", 0, GroupPartition{}, fmt.Errorf("metadata: pending offset key %q: %w", key, err)
	}
	pid, err := strconv.ParseInt(parts[3], 10, 64)
	if err != nil {
		return "", 0, GroupPartition{}, fmt.Errorf("metadata: pending offset key %q: %w", key, err)
	}
	p, err := strconv.ParseInt(parts[5], 10, 32)
	if err != nil {
		return "", 0, GroupPartition{}, fmt.Errorf("metadata: pending offset key %q: %w", key, err)
	}
	return group, pid, GroupPartition{Topic: parts[4], Partition: int32(p)}, nil
}
