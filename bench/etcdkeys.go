package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// The keys the bench reads, under the cluster's prefix (the layout of
// issue 18's contract): topics/<name> holds the topic's JSON with its id,
// own/parts/<topic-id-hex>/<partition %010d> the owner of a partition.
const (
	topicKeyPrefix = "topics/"
	ownerKeyPrefix = "own/parts/"
)

// owners reads the owner of every partition of topics from etcd; a
// partition without an owner now is left out.
func (c *clusterTarget) owners(ctx context.Context, topics []string) (map[topicPartition]int32, error) {
	return readOwners(ctx, c.etcd.client, etcdPrefix+"/", topics)
}

func readOwners(ctx context.Context, cli *clientv3.Client, prefix string, topics []string) (map[topicPartition]int32, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out := map[topicPartition]int32{}
	for _, name := range topics {
		resp, err := cli.Get(ctx, prefix+topicKeyPrefix+name)
		if err != nil {
			return nil, fmt.Errorf("bench: etcd: topic %s: %w", name, err)
		}
		if len(resp.Kvs) == 0 {
			return nil, fmt.Errorf("bench: etcd: no key %s%s%s", prefix, topicKeyPrefix, name)
		}
		var t struct {
			ID string `json:"id"` // 32 lowercase hex digits
		}
		if err := json.Unmarshal(resp.Kvs[0].Value, &t); err != nil || len(t.ID) != 32 {
			return nil, fmt.Errorf("bench: etcd: topic %s = %q: want JSON with an \"id\" of 32 hex digits (%v)", name, resp.Kvs[0].Value, err)
		}
		own, err := cli.Get(ctx, prefix+ownerKeyPrefix+t.ID+"/", clientv3.WithPrefix())
		if err != nil {
			return nil, fmt.Errorf("bench: etcd: owners of %s: %w", name, err)
		}
		for _, kv := range own.Kvs {
			p, err := strconv.ParseInt(path.Base(string(kv.Key)), 10, 32)
			var o struct {
				NodeID *int32 `json:"node_id"`
			}
			if err == nil {
				err = json.Unmarshal(kv.Value, &o)
			}
			if err != nil || o.NodeID == nil {
				return nil, fmt.Errorf("bench: etcd: owner key %s = %q: want {\"node_id\":N,...} (%v)", kv.Key, kv.Value, err)
			}
			out[topicPartition{name, int32(p)}] = *o.NodeID
		}
	}
	return out, nil
}

// compactDefrag compacts etcd's history to the current revision,
// defragments the database and counts the keys under prefix, reading the
// database size before and after.
func (e *etcdProcess) compactDefrag(ctx context.Context, prefix string) (*EtcdCompaction, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	start := time.Now()
	st, err := e.client.Status(ctx, e.endpoint)
	if err != nil {
		return nil, fmt.Errorf("bench: etcd status: %w", err)
	}
	c := &EtcdCompaction{Revision: st.Header.Revision, DBSizeBefore: float64(st.DbSize), DBInUseBefore: float64(st.DbSizeInUse)}
	if _, err := e.client.Compact(ctx, c.Revision, clientv3.WithCompactPhysical()); err != nil && !isCompacted(err) {
		return nil, fmt.Errorf("bench: etcd compact to %d: %w", c.Revision, err)
	}
	if _, err := e.client.Defragment(ctx, e.endpoint); err != nil {
		return nil, fmt.Errorf("bench: etcd defragment: %w", err)
	}
	if st, err = e.client.Status(ctx, e.endpoint); err != nil {
		return nil, fmt.Errorf("bench: etcd status: %w", err)
	}
	c.DBSizeAfter, c.DBInUseAfter = float64(st.DbSize), float64(st.DbSizeInUse)
	keys, err := e.client.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return nil, fmt.Errorf("bench: etcd key count: %w", err)
	}
	c.Keys = keys.Count
	c.Seconds = time.Since(start).Seconds()
	return c, nil
}

// isCompacted: etcd's history is already compacted to that revision (by
// the brokers' own maintenance).
func isCompacted(err error) bool { return errors.Is(err, rpctypes.ErrCompacted) }
