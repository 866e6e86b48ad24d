package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment-io/sediment/cluster"
	"github.com/sediment-io/sediment/groupcoord"
	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv"
	"github.com/sediment-io/sediment/protocol"
	"github.com/sediment-io/sediment/table"
	"github.com/sediment-io/sediment/txncoord"
)

// lateNode is the cluster membership as the log and the group and
// transaction coordinators see it. They open before the node can start
// (the node hands them partitions and shards as soon as it runs), so until
// it is set they own nothing and the session counts as not valid.
type lateNode struct{ n atomic.Pointer[cluster.Node] }

func (l *lateNode) Fence(id metadata.TopicID, p int32) (metadata.Cond, bool) {
	if n := l.n.Load(); n != nil {
		return n.Fence(id, p)
	}
	return metadata.Cond{}, false
}

func (l *lateNode) Valid() bool {
	n := l.n.Load()
	return n != nil && n.Valid()
}

func (l *lateNode) Sweeps() bool {
	n := l.n.Load()
	return n != nil && n.Sweeps()
}

func (l *lateNode) ShardFence(shard int32) (metadata.Cond, bool) {
	if n := l.n.Load(); n != nil {
		return n.ShardFence(shard)
	}
	return metadata.Cond{}, false
}

// TableFence is the converter's view of its table slots (table.Fencer).
func (l *lateNode) TableFence(id metadata.TopicID) (metadata.Cond, bool) {
	if n := l.n.Load(); n != nil {
		return n.TableFence(id)
	}
	return metadata.Cond{}, false
}

// clusterView adapts the node to what the Kafka protocol answers with.
type clusterView struct{ n *cluster.Node }

var _ protocol.ClusterView = clusterView{}

func (v clusterView) Brokers() []protocol.Broker {
	bs := v.n.Brokers()
	out := make([]protocol.Broker, len(bs))
	for i, b := range bs {
		out[i] = protocol.Broker{NodeID: b.NodeID, Host: b.Host, Port: b.Port, Rack: b.Rack}
	}
	return out
}

func (v clusterView) Controller() int32 { return v.n.Controller() }

func (v clusterView) Leader(id metadata.TopicID, p int32) (int32, int32, bool) {
	return v.n.Leader(id, p)
}

// Coordinator answers for consumer groups (key type 0) and transactional
// ids (key type 1): both are coordinated by the owner of the key's shard.
func (v clusterView) Coordinator(keyType int8, key string) (int32, bool) {
	switch keyType {
	case 0:
		return v.n.ShardLeader(groupcoord.ShardOf(key))
	case 1:
		return v.n.ShardLeader(txncoord.ShardOf(key))
	}
	return -1, false
}

// startCluster joins the cluster on the etcd the metadata lives in: it
// registers this broker, and from then on the node acquires and releases
// partitions and coordinator shards as the controller places them.
func (b *broker) startCluster(ctx context.Context, cfg *serveConfig, host string, port int32,
	logger *slog.Logger, reg prometheus.Registerer) error {
	kv := b.etcd
	n, err := cluster.Start(ctx, cluster.Config{
		Client: kv.Client(), Prefix: kv.Prefix(), Meta: b.meta,
		NodeID: int32(cfg.NodeID), Host: host, Port: port, Rack: cfg.Rack,
		Durability: cfg.Durability, SessionTimeout: cfg.SessionTimeout,
		Partitions: b.log, Shards: shardMux{groups: b.groups, txns: b.txns}, Tables: b.tables, Logger: logger, Registry: reg,
		IsTable: func(c map[string]string) bool { return table.ConfigOf(c).Enable },
	})
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	b.node = n
	b.late.n.Store(n)
	return nil
}

// etcdKV is the --metadata backend when it is etcd, nil otherwise.
func etcdKV(kv metadata.KV) *etcdkv.KV {
	e, _ := kv.(*etcdkv.KV)
	return e
}

// startEtcdMaintenance compacts etcd's history and reports its size in the
// background until the broker closes.
func (b *broker) startEtcdMaintenance(cfg *serveConfig, logger *slog.Logger, reg prometheus.Registerer) {
	ctx, cancel := context.WithCancel(context.Background())
	b.stopMaintain = cancel
	go b.etcd.Maintain(ctx, etcdkv.MaintainOptions{Every: cfg.EtcdCompaction, Registry: reg, Logger: logger})
}
