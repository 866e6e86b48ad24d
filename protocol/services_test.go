package protocol

import (
	"context"
	"fmt"

	"github.com/sediment-io/sediment/groupcoord"
	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/partition"
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

// withServices fills in the group coordinator and the producer-id
// allocator that cmd/broker hands a real server.
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
	return cfg, nil
}
