// Package metadata owns the broker's durable metadata: topics and their
// configs, partition state (log start offset, the end of the log committed to
// the object store, and producer state as of that end: idempotent sequences,
// open transactions and aborted ones), each partition's
// leader-epoch history, the object index that says which object holds which
// offsets, broker configs, the producer-id counter, and consumer groups with
// their committed offsets.
//
// Two layers: KV is a small transactional key-value interface with versions
// (backends: bbolt in this package, the single-node default, and etcd in
// metadata/etcdkv; the interface keeps to what etcd can offer); Store is
// the typed layer
// above it. Every update is a compare-and-swap on the versions read, so a
// second writer can never silently overwrite the first.
//
// Key layout (all values JSON unless noted):
//
//	topics/<name>                               Topic
//	parts/<topic-id-hex>/<partition %010d>      PartitionState
//	epochs/<topic-id-hex>/<partition %010d>     LeaderEpochs: the leader-epoch history, written
//	                                            at the first epoch bump (absent: epoch 0 from offset 0)
//	producers/<topic-id-hex>/<partition %010d>/...   producer deltas, snapshots, with transactions (producers.go; binary)
//	index/<topic-id-hex>/<partition %010d>/<base offset %020d>   Segment
//	objects/<object key>                        ObjectRecord: how many segments point into it
//	garbage/<object key>                        GarbageRecord: unreferenced, deleted after a grace period
//	deleted-topics/<topic-id-hex>               DeletedTopic: deleted, its index not yet released
//	pending-topics/<topic-id-hex>               a create or grow written in pieces, not finished
//	                                            (topicsplit.go): its partition states are not live
//	config/broker                               map[string]string
//	producerids/next                            int64, the next unallocated id
//	groupcoord/owner                            the one-node group coordinator's fence (node id, claim
//	                                            time); its group writes are conditional on its version
//	groupcoord/layout                           present once the group keys below carry their shard
//	groups/<shard %03d>/<group-id, path-escaped>   GroupRecord: the last completed generation
//	offsets/<shard %03d>/<group-id, path-escaped>/<topic>/<partition %010d>   CommittedOffset
//	txnoffsets/<shard %03d>/<group-id, path-escaped>/<producer id %019d>/<topic>/<partition %010d>
//	                                            PendingOffset: committed inside a transaction, not
//	                                            yet completed by its marker
//	txncoord/owner, txncoord/epochs/<shard %03d>, txns/<shard %03d>/<txn-id, path-escaped>
//	                                            the transaction coordinator's fence, coordinator
//	                                            epochs and records (txns.go)
//	acls/<resource type>/<pattern type>/<escaped name>/<binding hash>, acls-revision
//	                                            ACL bindings and the revision every ACL write raises
//	                                            (acls.go)
//	scram/<user, path-escaped>/<mechanism>      ScramCredential: salt, StoredKey, ServerKey,
//	                                            iterations, as Kafka stores them (scram.go)
//
// A group's shard is GroupShard(id): FNV-1a 32 of the id, mod 64. A shard's
// groups and offsets are each one range, which is what a coordinator taking
// over the shard reads; in a cluster every write of a shard's groups is
// conditional on the revision of that shard's own key (own/shards/<shard>).
// Stores written before shards existed are moved to this layout once, by
// MigrateGroupKeys.
//
// In a cluster (etcd), also:
//
//	own/parts/<topic-id-hex>/<partition %010d>  OwnerRecord, on the owner's session lease:
//	                                            its version is the partition's fence (ownership.go)
//	own/shards/<shard %03d>                     OwnerRecord of a coordinator shard (its groups and
//	                                            its transactional ids)
//	brokers/<node-id %010d>, members/<node-id %010d>, placement/..., controller/...
//	                                            the cluster package's keys (see its doc)
//
// Group ids may hold any byte, so they are path-escaped (url.PathEscape:
// a '/' becomes %2F) and one group's keys are never a prefix of another's.
// Offsets exist only under a group record (WriteGroups refuses otherwise)
// and are deleted with it.
//
// The package never knows the wire protocol and holds no caches: callers own
// the live state and use this package as its durable record.
package metadata
