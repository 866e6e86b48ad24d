// Package etcdkv is the etcd backend of metadata.KV, for brokers that share
// their metadata in a cluster. It owns the mapping of the KV contract onto
// etcd's: every key lives under one prefix, an Item's Version is the key's
// ModRevision (0 for a missing key, so a Cond with Version 0 means
// "absent"), and Txn is one etcd transaction whose compares are those
// ModRevisions.
//
// etcd refuses a transaction over its limits (--max-txn-ops, 128 by
// default; --max-request-bytes, 1.5 MiB by default). Txn checks both
// before it sends and returns ErrLimit naming the limit, so that a caller
// learns to split rather than to retry. etcd also refuses a transaction in
// which two writes touch the same key; Txn folds the ops, which KV applies
// in order, into an equivalent set of disjoint writes first.
//
// An error after the request may have reached etcd (a deadline, a lost
// connection, a leader change) wraps metadata.ErrUncertain: the caller
// settles it by reading back. This package never retries a write.
//
// It never runs etcd itself, and it holds no leases or sessions: an Op
// with a Lease puts its key on a lease the caller (the cluster package)
// granted and keeps alive.
package etcdkv
