package groupcoord

import (
	"time"

	"github.com/sediment-io/sediment/config"
	"github.com/sediment-io/sediment/metadata"
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
