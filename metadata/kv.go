package metadata

import (
	"context"
	"errors"
)

// ErrConflict is returned by KV.Txn when a condition did not hold: another
// writer changed a key since the caller read it.
var ErrConflict = errors.New("metadata: conflict: a key changed since it was read")

// IsConflict reports whether err is a lost compare-and-swap.
func IsConflict(err error) bool { return errors.Is(err, ErrConflict) }

// ErrUncertain marks a KV.Txn error after which the transaction may or may
// not have applied: the request reached a networked backend (etcd) and the
// answer was lost to a deadline, a dropped connection or a leader change.
// Retrying such a write blindly may apply it twice, so a caller settles it by
// reading back what the transaction would have written. An error without it
// means the transaction did not apply.
var ErrUncertain = errors.New("metadata: outcome unknown: the transaction may have applied")

// IsUncertain reports whether err leaves a transaction's outcome unknown.
func IsUncertain(err error) bool { return errors.Is(err, ErrUncertain) }

// Item is one key with its value and version. Version is the revision of the
// transaction that last wrote the key; it is never 0 for a stored key.
type Item struct {
	Key     string
	Value   []byte
	Version int64
}

// Cond is a transaction precondition: the key's current version must equal
// Version, where 0 means the key must not exist.
type Cond struct {
	Key     string
	Version int64
}

// Op is one write inside a transaction.
type Op struct {
	Key   string
	Value []byte
	// Delete removes Key instead of writing Value.
	Delete bool
	// DeletePrefix removes every key that starts with Key.
	DeletePrefix bool
	// Lease, when non-zero, ties a written key to that etcd lease: etcd
	// deletes the key when the lease ends (the broker's session expired
	// or was revoked). Only etcd has leases; bbolt refuses such an Op.
	Lease int64
}

// Put returns an Op that writes value under key.
func Put(key string, value []byte) Op { return Op{Key: key, Value: value} }

// Delete returns an Op that removes key.
func Delete(key string) Op { return Op{Key: key, Delete: true} }

// DeletePrefix returns an Op that removes every key starting with prefix.
func DeletePrefix(prefix string) Op { return Op{Key: prefix, DeletePrefix: true} }

// KV is the transactional key-value store under the metadata layer. Its
// backends are bbolt (one node, this package) and etcd (clusters,
// metadata/etcdkv); it asks nothing etcd could not give. Every write goes through Txn, which
// applies all of its ops atomically only if every Cond holds, so a second
// writer can never silently overwrite the first.
type KV interface {
	// Get returns the key's item; ok is false when the key does not exist.
	Get(ctx context.Context, key string) (item Item, ok bool, err error)
	// Range returns up to limit items (limit <= 0: all) with start <= key <
	// end in ascending key order, or descending when reverse is set.
	Range(ctx context.Context, start, end string, limit int, reverse bool) ([]Item, error)
	// Txn applies ops atomically if every cond holds, else returns
	// ErrConflict and changes nothing. It returns the revision it wrote.
	// An error wrapping ErrUncertain leaves the outcome unknown.
	Txn(ctx context.Context, conds []Cond, ops []Op) (rev int64, err error)
	// Close releases the backend.
	Close() error
}

// PrefixEnd returns the smallest key greater than every key with prefix, for
// use as a Range end.
func PrefixEnd(prefix string) string {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return "\xff\xff\xff\xff" // prefix of only 0xff bytes: no practical end
}
