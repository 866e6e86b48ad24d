package cluster

import (
	"context"
	"fmt"
	"sort"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sediment-io/sediment/metadata"
)

// Description is the cluster as its metadata records it at one moment,
// for `broker cluster describe`.
type Description struct {
	// Revision is the etcd revision every part was read at (0 for a
	// metadata store without revisions).
	Revision int64
	// Brokers are the live brokers (registered on a valid lease).
	Brokers []LiveBroker
	// Members are every broker that ever joined, live or gone.
	Members []Member
	// Controller is the elected controller's node id, -1 when none.
	Controller int32
	Partitions []PartitionPlacement
	Shards     []ShardPlacement
	// Tables are the table topics' converters.
	Tables []TablePlacement
}

// TablePlacement is where a table topic's converter is placed and runs.
type TablePlacement struct {
	Topic         string
	Placed, Owner int32
}

// LiveBroker is one registered broker.
type LiveBroker struct {
	Broker
	Durability string
	StartedMs  int64
}

// PartitionPlacement is where one partition is placed and who owns it now
// (Owner -1: nobody, between a release and the next acquire).
type PartitionPlacement struct {
	Topic            string
	TopicID          metadata.TopicID
	Partition        int32
	Placed, Owner    int32
	Epoch            int32
	CommittedOffset  int64 // the end of the partition's log in the bucket
	PlacedOnGoneNode bool  // its placement waits for a gone wal-mode broker
}

// ShardPlacement is where one coordinator shard is placed and who owns it now.
type ShardPlacement struct {
	Shard         int32
	Placed, Owner int32
}

// describeAttempts bounds the reads of a description whose revision was
// compacted away while it was read.
const describeAttempts = 3

// Describe reads the cluster's brokers, controller, placement and owners
// from kv, the cluster's metadata KV, all at one etcd revision.
func Describe(ctx context.Context, kv metadata.KV) (Description, error) {
	e, ok := kv.(etcdBacked)
	if !ok {
		return describeAt(ctx, kv)
	}
	var err error
	for range describeAttempts {
		var snap *snapshotKV
		if snap, err = newSnapshot(ctx, e); err != nil {
			break
		}
		var d Description
		if d, err = describeAt(ctx, snap); err == nil || !isCompacted(err) {
			d.Revision = snap.rev
			return d, err
		}
	}
	return Description{Controller: -1}, err
}

// describeAt is Describe of what kv reads.
func describeAt(ctx context.Context, kv metadata.KV) (Description, error) {
	d := Description{Controller: -1}
	live := map[int32]bool{}
	if err := rangeDecode(ctx, kv, brokersPrefix, decodeBroker, func(_ metadata.Item, v any) {
		b := v.(brokerRecord)
		d.Brokers = append(d.Brokers, LiveBroker{Broker: b.broker(), Durability: b.Durability, StartedMs: b.StartedMs})
		live[b.NodeID] = true
	}); err != nil {
		return d, err
	}
	if err := rangeDecode(ctx, kv, membersPrefix, decodeMember, func(_ metadata.Item, v any) {
		d.Members = append(d.Members, v.(Member))
	}); err != nil {
		return d, err
	}
	var err error
	if d.Controller, err = describeController(ctx, kv); err != nil {
		return d, err
	}
	owners := map[string]metadata.OwnerRecord{}
	if err := rangeDecode(ctx, kv, "own/", decodeOwner, func(it metadata.Item, v any) {
		owners[it.Key] = v.(metadata.OwnerRecord)
	}); err != nil {
		return d, err
	}
	if err := d.describePartitions(ctx, kv, owners, live); err != nil {
		return d, err
	}
	if err := d.describeShards(ctx, kv, owners); err != nil {
		return d, err
	}
	return d, d.describeTables(ctx, kv, owners)
}

func (d *Description) describeTables(ctx context.Context, kv metadata.KV, owners map[string]metadata.OwnerRecord) error {
	it, ok, err := kv.Get(ctx, tablesPlacement)
	if err != nil || !ok {
		return err
	}
	v, err := decodePlacement(it.Value)
	if err != nil {
		return fmt.Errorf("cluster: decode %s: %w", tablesPlacement, err)
	}
	rec := v.(placementRecord)
	names := map[metadata.TopicID]string{}
	for _, p := range d.Partitions {
		names[p.TopicID] = p.Topic
	}
	for i, hex := range rec.Topics {
		var id metadata.TopicID
		if id.UnmarshalText([]byte(hex)) != nil {
			continue
		}
		tp := TablePlacement{Topic: names[id], Placed: at(rec.Owners, int32(i)), Owner: -1}
		if tp.Topic == "" {
			tp.Topic = hex // deleted since it was placed
		}
		if r, ok := owners[TableOwnerKey(id)]; ok {
			tp.Owner = r.NodeID
		}
		d.Tables = append(d.Tables, tp)
	}
	return nil
}

func (d *Description) describePartitions(ctx context.Context, kv metadata.KV, owners map[string]metadata.OwnerRecord, live map[int32]bool) error {
	meta := metadata.NewStore(kv)
	topics, err := meta.Topics(ctx)
	if err != nil {
		return err
	}
	sort.Slice(topics, func(i, j int) bool { return topics[i].Name < topics[j].Name })
	for _, t := range topics {
		placed, err := readPlacement(ctx, kv, placementKey(t.ID))
		if err != nil {
			return err
		}
		for p := range t.Partitions {
			po := PartitionPlacement{Topic: t.Name, TopicID: t.ID, Partition: p, Placed: at(placed, p), Owner: -1, Epoch: -1}
			if r, ok := owners[metadata.OwnerKey(t.ID, p)]; ok {
				po.Owner, po.Epoch = r.NodeID, r.Epoch
			}
			po.PlacedOnGoneNode = po.Placed >= 0 && !live[po.Placed]
			st, ok, err := meta.PartitionState(ctx, t.ID, p)
			if err != nil {
				return err
			}
			if ok {
				po.CommittedOffset = st.NextOffset
			}
			d.Partitions = append(d.Partitions, po)
		}
	}
	return nil
}

func (d *Description) describeShards(ctx context.Context, kv metadata.KV, owners map[string]metadata.OwnerRecord) error {
	placed, err := readPlacement(ctx, kv, shardsPlacement)
	if err != nil {
		return err
	}
	for s := range int32(len(placed)) {
		so := ShardPlacement{Shard: s, Placed: at(placed, s), Owner: -1}
		if r, ok := owners[metadata.ShardOwnerKey(s)]; ok {
			so.Owner = r.NodeID
		}
		d.Shards = append(d.Shards, so)
	}
	return nil
}

func readPlacement(ctx context.Context, kv metadata.KV, key string) ([]int32, error) {
	it, ok, err := kv.Get(ctx, key)
	if err != nil || !ok {
		return nil, err
	}
	v, err := decodePlacement(it.Value)
	if err != nil {
		return nil, fmt.Errorf("cluster: decode %s: %w", key, err)
	}
	return v.(placementRecord).Owners, nil
}

func at(s []int32, i int32) int32 {
	if int(i) < len(s) {
		return s[i]
	}
	return -1
}

// rangeDecode decodes every item under prefix and hands it to fn.
func rangeDecode(ctx context.Context, kv metadata.KV, prefix string, decode func([]byte) (any, error), fn func(metadata.Item, any)) error {
	items, err := kv.Range(ctx, prefix, metadata.PrefixEnd(prefix), 0, false)
	if err != nil {
		return fmt.Errorf("cluster: read %s: %w", prefix, err)
	}
	for _, it := range items {
		v, err := decode(it.Value)
		if err != nil {
			return fmt.Errorf("cluster: decode %s: %w", it.Key, err)
		}
		fn(it, v)
	}
	return nil
}

// etcdBacked is the part of etcdkv.KV the controller lookup needs: the
// election's leader is the candidate key with the lowest create revision,
// which metadata.Item does not carry.
type etcdBacked interface {
	Client() *clientv3.Client
	Prefix() string
}

// describeController returns the elected controller, -1 when none.
func describeController(ctx context.Context, kv metadata.KV) (int32, error) {
	e, ok := kv.(etcdBacked)
	if !ok {
		return -1, nil // no election without etcd
	}
	opts := clientv3.WithFirstCreate()
	if snap, ok := kv.(*snapshotKV); ok {
		opts = append(opts, clientv3.WithRev(snap.rev))
	}
	resp, err := e.Client().Get(ctx, e.Prefix()+controllerPrefix+"/", opts...)
	if err != nil {
		return -1, fmt.Errorf("cluster: read the controller: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return -1, nil
	}
	v, err := decodeControllerValue(resp.Kvs[0].Value)
	if err != nil {
		return -1, fmt.Errorf("cluster: decode the controller: %w", err)
	}
	return v.(int32), nil
}
