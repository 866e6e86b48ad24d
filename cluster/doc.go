// Package cluster runs a broker's membership in a cluster on etcd: its
// session (a lease kept alive, and a local deadline on the monotonic clock
// past which the broker must not act as an owner), its registration, the
// controller election and the placement the controller computes, and the
// ownership of partitions, group-coordinator shards and table topics'
// converters, converged on that placement.
//
// Keys, all under the metadata prefix (values JSON):
//
//	brokers/<node-id %010d>    Broker and its durability, on the session lease: live brokers
//	members/<node-id %010d>    member: outlives the broker, so that a wal-mode broker's
//	                           partitions wait for it (unless taken_over)
//	placement/<topic-id-hex>   the controller's target owner of every partition of a topic
//	placement/shards           the same for the group-coordinator shards
//	placement/tables           the same for the table slots, naming each slot's topic
//	controller/<lease hex>     the concurrency.Election of the controller
//	own/parts/..., own/shards/...   the owners (metadata.OwnerKey), on the owner's lease
//	own/tables/<topic-id-hex>  the broker running a table topic's converter (tables.go)
//
// The controller places by rendezvous hashing over the live brokers,
// sticky: a partition stays with its live owner (or waits for a gone
// wal-mode one) unless that owner holds more than its fair share, so that
// brokers that join take their part (placement.go).
//
// Safety never rests on this package's views or on the controller: every
// durable write about a partition or shard carries its fence (the own key
// at the version its owner wrote), so a broker that lost its lease, or a
// stale placement, cannot commit. The placement only decides who tries.
//
// The package knows neither the wire protocol nor the partition log: it
// drives them through Owner, ShardOwner and TableOwner.
package cluster
