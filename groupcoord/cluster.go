package groupcoord

import (
	"time"

	"github.com/sediment-io/sediment/config"
	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/partition"
)

// Cluster is what the coordinator needs to know of the rest of the broker:
// the dynamic broker configs (group.*, offsets.*) and which topics exist.
type Cluster interface {
	// BrokerConfig returns the dynamic broker configs (unset ones take
	// their registered default).
	BrokerConfig() map[string]string
	// TopicPartitions returns a live topic's id and partition count; ok is
	// false when no such topic exists.
	TopicPartitions(name string) (id metadata.TopicID, partitions int32, ok bool)
}

// LogCluster adapts the broker's partition log to Cluster. Topics are
// looked up on use, so a deleted topic is noticed on the next commit,
// fetch or cleanup pass.
func LogCluster(l *partition.Log, broker *config.Dynamic) Cluster { return logCluster{l, broker} }

type logCluster struct {
	l      *partition.Log
	broker *config.Dynamic
}

func (c logCluster) BrokerConfig() map[string]string { return c.broker.Map() }

func (c logCluster) TopicPartitions(name string) (metadata.TopicID, int32, bool) {
	t, ok := c.l.Topic(name)
	if !ok {
		return metadata.TopicID{}, 0, false
	}
	return t.ID, int32(len(t.Partitions())), true
}

// settings are the group configs in effect for one operation.
type settings struct {
	initialDelay     time.Duration
	minSession       time.Duration
	maxSession       time.Duration
	maxSize          int
	retention        time.Duration
	retentionCheck   time.Duration
	metadataMaxBytes int
}

// settings resolves the group configs from the cluster's broker configs.
func (c *Coordinator) settings() settings {
	v := config.Broker(c.cluster.BrokerConfig())
	return settings{
		initialDelay:     v.Millis("group.initial.rebalance.delay.ms"),
		minSession:       v.Millis("group.min.session.timeout.ms"),
		maxSession:       v.Millis("group.max.session.timeout.ms"),
		maxSize:          int(v.Int("group.max.size")),
		retention:        time.Duration(v.Int("offsets.retention.minutes")) * time.Minute,
		retentionCheck:   v.Millis("offsets.retention.check.interval.ms"),
		metadataMaxBytes: int(v.Int("offset.metadata.max.bytes")),
	}
}
