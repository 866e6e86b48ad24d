package metadata

// TxnLimits bounds one transaction of a KV backend. MaxOps bounds its
// conditions and, separately, its writes (etcd's --max-txn-ops counts each
// on its own); MaxBytes bounds the whole request (--max-request-bytes),
// in which each write costs its key, its value and OpBytes more (the
// backend's key prefix and framing). A zero MaxOps or MaxBytes is no bound.
type TxnLimits struct {
	MaxOps   int
	MaxBytes int
	OpBytes  int
}

// LimitedKV is a KV whose transactions are bounded (etcd). The Store
// splits the operations that scale with a topic's partitions to fit; a KV
// that does not implement it (bbolt) takes any transaction whole. A KV that
// wraps another (metrics, fault injection) exposes it with Unwrap() KV.
type LimitedKV interface {
	KV
	TxnLimits() TxnLimits
}

// TxnLimits returns the limits of the Store's KV (zero: none), for a
// caller that plans a transaction of its own size: compaction bounds the
// segments one rewrite replaces by it.
func (s *Store) TxnLimits() TxnLimits { return kvLimits(s.kv) }

// txnOverhead is room for a transaction's few conditions.
const txnOverhead = 16 << 10

// kvLimits returns the limits of kv, or of the backend it wraps.
func kvLimits(kv KV) TxnLimits {
	for range 8 { // wrappers of wrappers; never a cycle in practice
		if l, ok := kv.(LimitedKV); ok {
			return l.TxnLimits()
		}
		u, ok := kv.(interface{ Unwrap() KV })
		if !ok {
			return TxnLimits{}
		}
		kv = u.Unwrap()
	}
	return TxnLimits{}
}

// fits reports whether a transaction of conds and ops is within l.
func (l TxnLimits) fits(conds int, ops []Op) bool {
	if l.MaxOps > 0 && (conds > l.MaxOps || len(ops) > l.MaxOps) {
		return false
	}
	return l.MaxBytes <= 0 || l.opsBytes(ops)+txnOverhead <= l.MaxBytes
}

// chunks splits ops, in order, into runs that each fit in one transaction
// (with the few conditions a caller adds).
func (l TxnLimits) chunks(ops []Op) [][]Op {
	var out [][]Op
	for len(ops) > 0 {
		n, size := 0, txnOverhead
		for n < len(ops) {
			size += l.opBytes(ops[n])
			if n > 0 && ((l.MaxOps > 0 && n+1 > l.MaxOps) || (l.MaxBytes > 0 && size > l.MaxBytes)) {
				break
			}
			n++
		}
		out, ops = append(out, ops[:n]), ops[n:]
	}
	return out
}

func (l TxnLimits) opBytes(op Op) int { return len(op.Key) + len(op.Value) + l.OpBytes }

func (l TxnLimits) opsBytes(ops []Op) int {
	n := 0
	for _, op := range ops {
		n += l.opBytes(op)
	}
	return n
}
