package etcdkv

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sediment-io/sediment/metadata"
)

// classify wraps a failed Txn's error. etcd refuses a bad request (too
// large, a duplicate key, no permission, no space) before it applies
// anything, with a code that says so; every other failure, and above all a
// deadline, a lost connection or a leader change after the request went
// out, may have applied the transaction, and wraps ErrUncertain.
func classify(err error) error {
	if refused(err) {
		return fmt.Errorf("etcdkv: txn: %w%s", err, limitHint(err))
	}
	return fmt.Errorf("etcdkv: txn: %w: %w", metadata.ErrUncertain, err)
}

func refused(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	code := codes.Unknown
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		code = ee.Code()
	} else if s, ok := status.FromError(err); ok {
		code = s.Code()
	}
	switch code {
	case codes.InvalidArgument, codes.FailedPrecondition, codes.PermissionDenied,
		codes.Unauthenticated, codes.ResourceExhausted, codes.OutOfRange, codes.Unimplemented:
		return true
	}
	return false
}
