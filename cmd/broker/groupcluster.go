package main

import (
	"github.com/sediment-io/sediment/config"
	"github.com/sediment-io/sediment/groupcoord"
	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/partition"
)

// logCluster adapts the broker's partition log and dynamic broker configs
// to groupcoord.Cluster. Topics are looked up on use, so a deleted topic is
// noticed on the next commit, fetch or cleanup pass.
type logCluster struct {
	l      *partition.Log
	broker *config.Dynamic
}

var _ groupcoord.Cluster = logCluster{}

func (c logCluster) BrokerConfig() map[string]string { return c.broker.Map() }

func (c logCluster) TopicPartitions(name string) (metadata.TopicID, int32, bool) {
	t, ok := c.l.Topic(name)
	if !ok {
		return metadata.TopicID{}, 0, false
	}
	return t.ID, int32(len(t.Partitions())), true
}
