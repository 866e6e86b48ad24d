package etcdkv

import (
	"errors"
	"strings"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/sediment-io/sediment/metadata"
)

// An etcd configured below the default limits refuses a transaction that
// Txn's own check let through: the error names the setting, and says the
// transaction did not apply.
func TestRefusedForALimitNamesTheSetting(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{rpctypes.ErrTooManyOps, "--max-txn-ops"},
		{rpctypes.ErrGRPCTooManyOps, "--max-txn-ops"},
		{rpctypes.ErrRequestTooLarge, "--max-request-bytes"},
		{rpctypes.ErrGRPCRequestTooLarge, "--max-request-bytes"},
	} {
		err := classify(tc.err)
		if !strings.Contains(err.Error(), tc.want) || metadata.IsUncertain(err) || !errors.Is(err, tc.err) {
			t.Errorf("%v: classified as %v, want a refusal naming %s", tc.err, err, tc.want)
		}
	}
	if err := classify(rpctypes.ErrDuplicateKey); strings.Contains(err.Error(), "--max") {
		t.Errorf("a duplicate key named a limit: %v", err)
	}
}
