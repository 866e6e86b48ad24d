package partition

import (
	"maps"
	"sync/atomic"

	"github.com/sediment-io/sediment/config"
	"github.com/sediment-io/sediment/metadata"
)

// Topic is a live topic: its partitions and its effective configs.
type Topic struct {
	Name string
	ID   metadata.TopicID

	parts atomic.Pointer[[]*Partition] // replaced whole when partitions are added
	cfg   atomic.Pointer[topicConfig]
}

// topicConfig is a topic's effective configuration, resolved against the
// broker's defaults; replaced whole on every change.
type topicConfig struct {
	own            map[string]string // set on the topic itself
	maxBatchBytes  int
	logAppendTime  bool
	retentionMs    int64
	retentionBytes int64
	compact        bool
}

func newTopic(mt metadata.Topic, broker map[string]string) *Topic {
	t := &Topic{Name: mt.Name, ID: mt.ID}
	empty := []*Partition{}
	t.parts.Store(&empty)
	t.setConfig(mt.Configs, broker)
	return t
}

func (t *Topic) setConfig(own, broker map[string]string) {
	v := config.Topic(own, broker)
	t.cfg.Store(&topicConfig{
		own:            maps.Clone(own),
		maxBatchBytes:  int(v.Int("max.message.bytes")),
		logAppendTime:  v.String("message.timestamp.type") == "LogAppendTime",
		retentionMs:    v.Int("retention.ms"),
		retentionBytes: v.Int("retention.bytes"),
		compact:        v.String("cleanup.policy") != "delete",
	})
}

// Partitions returns the topic's partitions.
func (t *Topic) Partitions() []*Partition { return *t.parts.Load() }

// Partition returns partition i, or nil.
func (t *Topic) Partition(i int32) *Partition {
	ps := t.Partitions()
	if i < 0 || int(i) >= len(ps) {
		return nil
	}
	return ps[i]
}

// Configs returns the configs set on the topic itself.
func (t *Topic) Configs() map[string]string { return maps.Clone(t.cfg.Load().own) }
