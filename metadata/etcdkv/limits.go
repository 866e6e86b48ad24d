package etcdkv

import (
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/protobuf/proto"

	"github.com/sediment-io/sediment/metadata"
)

// ErrLimit marks a transaction that etcd would refuse for its size: too
// many operations or too many bytes. It was not sent; the caller splits it.
var ErrLimit = errors.New("etcdkv: transaction over an etcd limit")

// Limits are the etcd server's request limits that Txn checks before it
// sends. They must not exceed the server's own settings.
type Limits struct {
	// MaxTxnOps mirrors etcd's --max-txn-ops (default 128). etcd counts
	// the compares and the writes of a transaction separately; each must
	// fit.
	MaxTxnOps int
	// MaxRequestBytes mirrors etcd's --max-request-bytes (default 1.5 MiB).
	MaxRequestBytes int
}

// DefaultLimits are etcd's defaults.
var DefaultLimits = Limits{MaxTxnOps: 128, MaxRequestBytes: 1536 * 1024}

// requestOverhead is room for what etcd wraps around a transaction before
// it compares the size (the raft request header).
const requestOverhead = 1024

func (l Limits) check(p txnPlan) error {
	if n := len(p.req.Compare); n > l.MaxTxnOps {
		return fmt.Errorf("%w: %d conditions, etcd --max-txn-ops is %d", ErrLimit, n, l.MaxTxnOps)
	}
	if n := len(p.req.Success); n > l.MaxTxnOps {
		return fmt.Errorf("%w: %d writes, etcd --max-txn-ops is %d", ErrLimit, n, l.MaxTxnOps)
	}
	if n := proto.Size(p.req) + requestOverhead; n > l.MaxRequestBytes {
		return fmt.Errorf("%w: about %d bytes, etcd --max-request-bytes is %d", ErrLimit, n, l.MaxRequestBytes)
	}
	return nil
}

// TxnLimits implements metadata.LimitedKV: the Store splits what scales
// with a topic's partitions to fit these.
func (k *KV) TxnLimits() metadata.TxnLimits {
	return metadata.TxnLimits{MaxOps: k.limits.MaxTxnOps, MaxBytes: k.limits.MaxRequestBytes - requestOverhead,
		OpBytes: len(k.prefix) + opFraming}
}

// opFraming bounds the protobuf framing of one write of a transaction.
const opFraming = 16

var _ metadata.LimitedKV = (*KV)(nil)

// limitHint names the etcd setting behind a transaction etcd refused for
// its size, which Txn's own check let through: the etcd is configured
// below the defaults the broker needs.
func limitHint(err error) string {
	switch rpctypes.ErrorDesc(err) {
	case rpctypes.ErrorDesc(rpctypes.ErrGRPCTooManyOps):
		return fmt.Sprintf(" (etcd's --max-txn-ops is below the %d the broker needs)", DefaultLimits.MaxTxnOps)
	case rpctypes.ErrorDesc(rpctypes.ErrGRPCRequestTooLarge):
		return fmt.Sprintf(" (etcd's --max-request-bytes is below the %d the broker needs)", DefaultLimits.MaxRequestBytes)
	}
	return ""
}
