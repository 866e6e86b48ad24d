// Package groupcoord is the consumer group coordinator of the classic group
// protocol: membership (JoinGroup, SyncGroup, Heartbeat, LeaveGroup), the
// group state machine, session and rebalance timeouts, static membership
// (KIP-345), committed offsets and the admin operations on groups
// (list, describe, delete, delete offsets).
//
// # Shards
//
// Groups are spread over Shards (64) coordinator shards by ShardOf, a
// stable hash of the group id. On one node (Config.Fence nil) the
// coordinator claims every shard at Open. In a cluster each shard has one
// owner, which the cluster makes the coordinator of the shard with
// AcquireShard (its groups and offsets are loaded from metadata in one
// range read each; members keep their member ids, generation and
// assignment), and takes away with ReleaseShard (a hand-over: the writes
// already queued finish first) or DropShard (the lease expired or the
// fence failed: at once). A request for a group of a shard not served here
// gets ErrNotCoordinator, and so does one arriving while the cluster gives
// no fence for the shard (past the broker's local lease deadline).
//
// # State machine
//
//	Empty ──first join──> PreparingRebalance ──all rejoined, or──> CompletingRebalance
//	  ^                     ^        │         rebalance timeout          │    │
//	  │   no members left   │        │                                    │    │ leader's SyncGroup
//	  └─────────────────────┼────────┘                                    │    │ made durable
//	                        │      join, leave, session expiry,           │    v
//	                        └──────── SyncGroup deadline ─────────────────┴── Stable
//
// Dead is the state of a group being deleted (DeleteGroups, or the
// retention of an empty group without offsets); requests for it get
// COORDINATOR_NOT_AVAILABLE until the deletion is durable and a fresh group
// of the same id can be created.
//
// # Ownership and waits
//
// Each group is one struct whose mutex guards all its state (STYLE.md: one
// owner per piece of state). Calls that must wait (JoinGroup until the
// rebalance completes, SyncGroup until the leader's assignment is durable,
// offset commits until they are durable) return a channel that receives
// exactly one result; the coordinator answers every such channel in
// bounded time: by completing the rebalance, by the rebalance timer, by
// removing the member, or on Close.
//
// # Durability
//
// Group records and offsets are stored in metadata (see metadata/doc.go
// for the keys) by one persister goroutine that batches every pending
// change of every group into one compare-and-swap transaction, conditional
// on the fence of every shard it touches (in a cluster, the revision of the
// shard's own key; on one node, the claim) and on each group's record
// version: group commit, as the WAL does for records. A transaction that
// fails on a fence is never retried: the fence is read back, and a shard
// whose fence moved is dropped, its waiting requests answered
// NOT_COORDINATOR. A transaction of unknown outcome (etcd) is settled by
// reading back, never by writing again. An offset commit is answered only
// after its transaction; a group's record is written when a generation
// completes (SyncGroup of the leader), when it becomes empty, and when a
// static member is replaced, which is what a restarted coordinator resumes
// from: a stable group stays stable across a broker restart.
//
// # Transactions
//
// Offsets committed inside a transaction (TxnCommit, KIP-98; checked as
// Kafka checks a TxnOffsetCommit, KIP-447) are stored as pending for
// (group, producer id), apart from the committed offsets, and answered only
// once durable. The transaction coordinator ends them through CompleteTxn
// for every shard its transaction's groups are in: a commit makes them the
// committed offsets in the same metadata transaction that drops them from
// the pending ones (in several when they do not fit in one: a crash in
// between leaves the rest pending, and the coordinator completes the
// transaction again), an abort drops them. While any are pending for a
// partition, OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT
// for it, its committed offset does not expire, and the group is neither
// deleted nor removed by the retention. They are loaded with the shard's
// groups, so they survive restarts and shard moves.
//
// The package never knows the wire protocol: requests and results are
// plain Go values, and errors are the sentinels of errors.go, which the
// protocol layer maps to Kafka codes, or for the transactional calls
// franz-go's kerr errors (UNSTABLE_OFFSET_COMMIT, PRODUCER_FENCED,
// INVALID_PRODUCER_EPOCH), as the transaction coordinator returns them.
package groupcoord
