package protocol

import (
	"context"
	"fmt"

	"github.com/sediment-io/sediment/groupcoord"
	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/partition"
	"github.com/sediment-io/sediment/txncoord"
)

// testCluster is the groupcoord.Cluster of the test brokers, as cmd/broker
// wires it: topics come from the log, broker configs from its dynamic
// configs.
type testCluster struct{ l *partition.Log }

func (c testCluster) BrokerConfig() map[string]string { return c.l.BrokerConfig().Map() }

func (c testCluster) TopicPartitions(name string) (metadata.TopicID, int32, bool) {
	t, ok := c.l.Topic(name)
	if !ok {
		return metadata.TopicID{}, 0, false
	}
	return t.ID, int32(len(t.Partitions())), true
}

// withServices fills in the group coordinator, the transaction
// coordinator and the producer-id allocator that cmd/broker hands a real
// server. The caller closes cfg.Txns after the server (the server closes
// the group coordinator).
func withServices(cfg Config, log *partition.Log, meta *metadata.Store) (Config, error) {
	if cfg.ProducerIDs == nil {
		cfg.ProducerIDs = partition.NewProducerIDs(meta)
	}
	if cfg.Groups == nil {
		g, err := groupcoord.Open(context.Background(), groupcoord.Config{Meta: meta,
			Cluster: testCluster{log}, NodeID: cfg.NodeID, Logger: cfg.Logger})
		if err != nil {
			return cfg, fmt.Errorf("open group coordinator: %w", err)
		}
		cfg.Groups = g
	}
	if cfg.Txns == nil {
		tc, err := txncoord.Open(context.Background(), txncoord.Config{Meta: meta, ProducerIDs: cfg.ProducerIDs,
			Markers: localMarkers{log, cfg.Groups}, Topics: testCluster{log}.partitions, Logger: cfg.Logger})
		if err != nil {
			cfg.Groups.Close()
			return cfg, fmt.Errorf("open transaction coordinator: %w", err)
		}
		cfg.Txns = tc
	}
	return cfg, nil
}

// partitions is the transaction coordinator's view of the log's topics.
func (c testCluster) partitions(topic string) (int32, bool) {
	_, n, ok := c.TopicPartitions(topic)
	return n, ok
}

// localMarkers is the txncoord.Markers of one node, as cmd/broker's: every
// partition and group is local.
type localMarkers struct {
	log    *partition.Log
	groups *groupcoord.Coordinator
}

func (m localMarkers) WriteMarkers(ctx context.Context, req txncoord.MarkerRequest) error {
	mk := partition.Marker{ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch, Commit: req.Commit,
		CoordinatorEpoch: req.CoordinatorEpoch}
	for _, tp := range req.Partitions {
		t, ok := m.log.Topic(tp.Topic)
		if !ok || t.Partition(tp.Partition) == nil {
			continue // deleted since it was added: nothing to mark
		}
		if _, err := m.log.WriteMarker(ctx, t.Partition(tp.Partition), mk); err != nil {
			return fmt.Errorf("marker for %s-%d: %w", tp.Topic, tp.Partition, err)
		}
	}
	shards := map[int32]bool{}
	for _, g := range req.Groups {
		shards[metadata.GroupShard(g)] = true
	}
	for shard := range shards {
		if err := m.groups.CompleteTxn(ctx, shard, req.ProducerID, req.ProducerEpoch, req.Commit); err != nil {
			return fmt.Errorf("complete offsets of shard %d: %w", shard, err)
		}
	}
	return nil
}
