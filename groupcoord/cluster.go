package groupcoord

import (
	"strconv"
	"time"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/partition"
)

// Cluster is what the coordinator needs to know of the rest of the broker:
// the dynamic broker configs (group.*, offsets.*) and which topics exist.
type Cluster interface {
	// BrokerConfig returns the dynamic broker configs (unset ones take
	// their default from metadata.BrokerConfigDefs).
	BrokerConfig() map[string]string
	// TopicPartitions returns a live topic's id and partition count; ok is
	// false when no such topic exists.
	TopicPartitions(name string) (id metadata.TopicID, partitions int32, ok bool)
}

// LogCluster adapts the broker's partition log to Cluster. Topics are
// looked up on use, so a deleted topic is noticed on the next commit,
// fetch or cleanup pass.
func LogCluster(l *partition.Log) Cluster { return logCluster{l} }

type logCluster struct{ l *partition.Log }

func (c logCluster) BrokerConfig() map[string]string { return c.l.BrokerConfig() }

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
	cfg := c.cluster.BrokerConfig()
	num := func(name string) int64 {
		v, _ := metadata.ResolveBrokerConfig(metadata.BrokerConfigDefs[name], cfg)
		n, _ := strconv.ParseInt(v, 10, 64) // validated when set
		return n
	}
	ms := func(name string) time.Duration { return time.Duration(num(name)) * time.Millisecond }
	return settings{
		initialDelay:     ms("group.initial.rebalance.delay.ms"),
		minSession:       ms("group.min.session.timeout.ms"),
		maxSession:       ms("group.max.session.timeout.ms"),
		maxSize:          int(num("group.max.size")),
		retention:        time.Duration(num("offsets.retention.minutes")) * time.Minute,
		retentionCheck:   ms("offsets.retention.check.interval.ms"),
		metadataMaxBytes: int(num("offset.metadata.max.bytes")),
	}
}
