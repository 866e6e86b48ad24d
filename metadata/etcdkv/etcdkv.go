package etcdkv

import (
	"context"
	"errors"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sediment-io/sediment/metadata"
)

// KV is a metadata.KV on an etcd cluster, under one key prefix.
type KV struct {
	cli    *clientv3.Client
	prefix string // prepended to every key; ends in "/"
	limits Limits
}

var _ metadata.KV = (*KV)(nil)

// Get implements metadata.KV.
func (k *KV) Get(ctx context.Context, key string) (metadata.Item, bool, error) {
	resp, err := k.cli.Get(ctx, k.prefix+key)
	if err != nil {
		return metadata.Item{}, false, fmt.Errorf("etcdkv: get %q: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return metadata.Item{}, false, nil
	}
	return k.item(resp.Kvs[0].Key, resp.Kvs[0].Value, resp.Kvs[0].ModRevision), true, nil
}

// Range implements metadata.KV.
func (k *KV) Range(ctx context.Context, start, end string, limit int, reverse bool) ([]metadata.Item, error) {
	if end <= start {
		return nil, nil
	}
	opts := []clientv3.OpOption{clientv3.WithRange(k.prefix + end)}
	if limit > 0 {
		opts = append(opts, clientv3.WithLimit(int64(limit)))
	}
	if reverse {
		opts = append(opts, clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend))
	}
	resp, err := k.cli.Get(ctx, k.prefix+start, opts...)
	if err != nil {
		return nil, fmt.Errorf("etcdkv: range [%q,%q): %w", start, end, err)
	}
	out := make([]metadata.Item, len(resp.Kvs))
	for i, kv := range resp.Kvs {
		out[i] = k.item(kv.Key, kv.Value, kv.ModRevision)
	}
	return out, nil
}

func (k *KV) item(key, value []byte, modRev int64) metadata.Item {
	return metadata.Item{Key: strings.TrimPrefix(string(key), k.prefix), Value: value, Version: modRev}
}

// Txn implements metadata.KV.
func (k *KV) Txn(ctx context.Context, conds []metadata.Cond, ops []metadata.Op) (int64, error) {
	req := k.plan(conds, ops)
	if err := k.limits.check(req); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil { // never sent: certainly not applied
		return 0, fmt.Errorf("etcdkv: txn: %w", err)
	}
	resp, err := k.cli.Txn(ctx).If(req.cmps...).Then(req.ops...).Commit()
	if err != nil {
		return 0, classify(err)
	}
	if !resp.Succeeded {
		return 0, fmt.Errorf("etcdkv: txn: %w", metadata.ErrConflict)
	}
	return resp.Header.Revision, nil
}

// Client returns the etcd client, for the cluster package's leases,
// watches and election, which the KV contract does not cover. Its keys
// must live under Prefix.
func (k *KV) Client() *clientv3.Client { return k.cli }

// Prefix returns the key prefix every key of this KV lives under; it ends
// in "/".
func (k *KV) Prefix() string { return k.prefix }

// Close implements metadata.KV.
func (k *KV) Close() error {
	if err := k.cli.Close(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("etcdkv: close: %w", err)
	}
	return nil
}
