// Package groupcoord is the consumer group coordinator of the classic group
// protocol: membership (JoinGroup, SyncGroup, Heartbeat, LeaveGroup), the
// group state machine, session and rebalance timeouts, static membership
// (KIP-345), committed offsets and the admin operations on groups
// (list, describe, delete, delete offsets). This broker coordinates every
// group.
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
// on the coordinator's fence and on each group's record version: group
// commit, as the WAL does for records. An offset commit is answered only
// after its transaction; a group's record is written when a generation
// completes (SyncGroup of the leader), when it becomes empty, and when a
// static member is replaced, which is what a restarted coordinator resumes
// from: a stable group stays stable across a broker restart.
//
// The package never knows the wire protocol: requests and results are
// plain Go values, and errors are the sentinels of errors.go, which the
// protocol layer maps to Kafka codes.
package groupcoord
