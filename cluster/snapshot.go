package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sediment-io/sediment/metadata"
)

// Describe reads many keys (brokers, members, the election, own keys,
// topics, partition states, placements). Read one by one at the latest
// revision they could mix moments: a partition owned by a broker the
// same description lists as gone, or counted twice while it moves. So
// they are all read at one etcd revision, the one the description names.

// snapshotKV reads an etcd-backed KV at one revision. It writes nothing.
type snapshotKV struct {
	cli    *clientv3.Client
	prefix string
	rev    int64
}

// errSnapshotWrite: a snapshot is read-only.
var errSnapshotWrite = errors.New("cluster: a snapshot of the metadata takes no write")

// newSnapshot pins the current revision of e's etcd.
func newSnapshot(ctx context.Context, e etcdBacked) (*snapshotKV, error) {
	resp, err := e.Client().Get(ctx, e.Prefix()+brokersPrefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return nil, fmt.Errorf("cluster: read the metadata revision: %w", err)
	}
	return &snapshotKV{cli: e.Client(), prefix: e.Prefix(), rev: resp.Header.Revision}, nil
}

// Get implements metadata.KV at the snapshot's revision.
func (s *snapshotKV) Get(ctx context.Context, key string) (metadata.Item, bool, error) {
	resp, err := s.cli.Get(ctx, s.prefix+key, clientv3.WithRev(s.rev))
	if err != nil {
		return metadata.Item{}, false, fmt.Errorf("cluster: get %q at revision %d: %w", key, s.rev, err)
	}
	if len(resp.Kvs) == 0 {
		return metadata.Item{}, false, nil
	}
	return s.item(resp.Kvs[0].Key, resp.Kvs[0].Value, resp.Kvs[0].ModRevision), true, nil
}

// Range implements metadata.KV at the snapshot's revision.
func (s *snapshotKV) Range(ctx context.Context, start, end string, limit int, reverse bool) ([]metadata.Item, error) {
	if end <= start {
		return nil, nil
	}
	opts := []clientv3.OpOption{clientv3.WithRange(s.prefix + end), clientv3.WithRev(s.rev)}
	if limit > 0 {
		opts = append(opts, clientv3.WithLimit(int64(limit)))
	}
	if reverse {
		opts = append(opts, clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend))
	}
	resp, err := s.cli.Get(ctx, s.prefix+start, opts...)
	if err != nil {
		return nil, fmt.Errorf("cluster: range [%q,%q) at revision %d: %w", start, end, s.rev, err)
	}
	out := make([]metadata.Item, len(resp.Kvs))
	for i, kv := range resp.Kvs {
		out[i] = s.item(kv.Key, kv.Value, kv.ModRevision)
	}
	return out, nil
}

// Txn implements metadata.KV: it refuses.
func (s *snapshotKV) Txn(context.Context, []metadata.Cond, []metadata.Op) (int64, error) {
	return 0, errSnapshotWrite
}

// Close implements metadata.KV; the client is the caller's.
func (s *snapshotKV) Close() error { return nil }

// Client makes the snapshot etcdBacked, for the controller lookup, which
// reads at the snapshot's revision too.
func (s *snapshotKV) Client() *clientv3.Client { return s.cli }

// Prefix is the cluster's key prefix.
func (s *snapshotKV) Prefix() string { return s.prefix }

func (s *snapshotKV) item(key, value []byte, modRev int64) metadata.Item {
	return metadata.Item{Key: strings.TrimPrefix(string(key), s.prefix), Value: value, Version: modRev}
}

// isCompacted reports whether err is etcd's answer to a read at a revision
// compacted away meanwhile: the description is read again at a newer one.
func isCompacted(err error) bool {
	return errors.Is(err, rpctypes.ErrCompacted) || errors.Is(err, rpctypes.ErrGRPCCompacted)
}
