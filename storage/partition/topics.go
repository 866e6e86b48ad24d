package partition

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"time"

	"github.com/sediment-io/sediment/config"
	"github.com/sediment-io/sediment/metadata"
)

// Errors of topic administration.
var (
	ErrTopicExists       = errors.New("partition: topic already exists")
	ErrInvalidPartitions = errors.New("partition: invalid partition count")
	ErrInvalidConfig     = config.ErrInvalid // an unknown config or a bad value
)

// MaxPartitions bounds the partitions of one topic.
const MaxPartitions = 100000

// Topic returns the named topic.
func (l *Log) Topic(name string) (*Topic, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	t, ok := l.topics[name]
	return t, ok
}

// TopicByID returns the topic with the given id.
func (l *Log) TopicByID(id metadata.TopicID) (*Topic, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	t, ok := l.byID[id]
	return t, ok
}

// Topics returns every topic sorted by name.
func (l *Log) Topics() []*Topic {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]*Topic, 0, len(l.topics))
	for _, t := range l.topics {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// CreateTopic creates a topic with the given partitions and configs. With
// validateOnly it checks everything and creates nothing.
func (l *Log) CreateTopic(ctx context.Context, name string, partitions int32, configs map[string]string, validateOnly bool) (*Topic, error) {
	if partitions <= 0 || partitions > MaxPartitions {
		return nil, fmt.Errorf("%w: %d (must be 1..%d)", ErrInvalidPartitions, partitions, MaxPartitions)
	}
	if err := config.ValidateTopic(configs); err != nil {
		return nil, err
	}
	if _, ok := l.Topic(name); ok {
		return nil, fmt.Errorf("%w: %s", ErrTopicExists, name)
	}
	if validateOnly {
		return nil, nil
	}
	l.topicsMu.Lock()
	defer l.topicsMu.Unlock()
	mt := metadata.Topic{Name: name, ID: metadata.NewTopicID(), Partitions: partitions,
		Configs: maps.Clone(configs), CreatedMs: time.Now().UnixMilli()}
	if err := l.meta.CreateTopic(ctx, mt); err != nil {
		if errors.Is(err, metadata.ErrTopicExists) {
			return nil, fmt.Errorf("%w: %s", ErrTopicExists, name)
		}
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t := newTopic(mt, l.opts.BrokerConfig.Map())
	parts := make([]*Partition, partitions)
	for i := range parts {
		parts[i] = l.newPartition(t, int32(i), metadata.PartitionState{})
	}
	t.parts.Store(&parts)
	l.topics[name], l.byID[t.ID] = t, t
	l.log.Info("topic created", "topic", name, "partitions", partitions, "id", mt.ID.String())
	return t, nil
}

// DeleteTopic deletes the topic and its data.
func (l *Log) DeleteTopic(ctx context.Context, name string) error {
	mt, err := l.deleteTopic(ctx, name)
	if err != nil {
		return err
	}
	l.log.Info("topic deleted", "topic", name, "id", mt.ID.String())
	if err := l.meta.ReleaseDeletedTopic(ctx, mt.ID, l.opts.GCGrace); err != nil && ctx.Err() == nil {
		l.log.Warn("deleted topic's objects not released yet; maintenance retries", "topic", name, "err", err)
	}
	return nil
}

// deleteTopic deletes the topic from metadata and from the live log.
func (l *Log) deleteTopic(ctx context.Context, name string) (metadata.Topic, error) {
	l.topicsMu.Lock()
	defer l.topicsMu.Unlock()
	mt, ok, err := l.meta.Topic(ctx, name)
	if err != nil {
		return mt, err
	}
	if !ok {
		return mt, fmt.Errorf("%w: %s", ErrUnknownPartition, name)
	}
	if err := l.meta.DeleteTopic(ctx, mt); err != nil {
		return mt, err
	}
	l.forgetTopic(name, mt.ID)
	return mt, nil
}

// forgetTopic drops the live topic name with id, if the log has it: its
// partitions fail their appends and reads from now on.
func (l *Log) forgetTopic(name string, id metadata.TopicID) {
	l.mu.Lock()
	t := l.topics[name]
	if t != nil && t.ID != id {
		t = nil
	}
	if t != nil {
		delete(l.topics, name)
	}
	delete(l.byID, id)
	l.mu.Unlock()
	if t != nil {
		for _, p := range t.Partitions() {
			l.up.forget(p.markDeleted())
		}
	}
}

// markDeleted fails the partition's future appends and reads, wakes its
// waiters, and returns the bytes it still had waiting for upload.
func (p *Partition) markDeleted() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deleted = true
	p.wakeLocked()
	var n int64
	for _, r := range p.refs[p.firstNew:] {
		n += int64(r.size)
	}
	return n
}

// PartitionCountError is a partition count that would not grow the topic.
// Its message is Kafka's: kafka-topics --alter prints the broker's message
// as it came.
type PartitionCountError struct {
	Topic              string
	Current, Requested int32
}

func (e *PartitionCountError) Error() string {
	if e.Requested == e.Current {
		return fmt.Sprintf("Topic already has %d partition(s).", e.Current)
	}
	return fmt.Sprintf("The topic %s currently has %d partition(s); %d would not be an increase.", e.Topic, e.Current, e.Requested)
}

// Is makes a PartitionCountError an ErrInvalidPartitions.
func (e *PartitionCountError) Is(target error) bool { return target == ErrInvalidPartitions }

// CreatePartitions grows the topic to count partitions.
func (l *Log) CreatePartitions(ctx context.Context, name string, count int32, validateOnly bool) error {
	return l.updateTopic(ctx, name, func(mt *metadata.Topic) error {
		if count <= mt.Partitions {
			return &PartitionCountError{Topic: name, Current: mt.Partitions, Requested: count}
		}
		if count > MaxPartitions {
			return fmt.Errorf("%w: topic %s cannot have %d partitions (at most %d)", ErrInvalidPartitions, name, count, MaxPartitions)
		}
		mt.Partitions = count
		return nil
	}, validateOnly)
}

// ConfigEdit returns the new set of configs given the current one (which it
// may modify), or an error naming the bad config.
type ConfigEdit func(map[string]string) (map[string]string, error)

// SetTopicConfigs replaces the configs set on the topic by what edit returns.
func (l *Log) SetTopicConfigs(ctx context.Context, name string, edit ConfigEdit, validateOnly bool) error {
	return l.updateTopic(ctx, name, func(mt *metadata.Topic) error {
		next, err := edit(maps.Clone(mt.Configs))
		if err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidConfig, err)
		}
		if err := config.ValidateTopic(next); err != nil {
			return err
		}
		mt.Configs = next
		return nil
	}, validateOnly)
}

// updateTopic applies change to the stored topic with compare-and-swap and
// then to the live topic.
func (l *Log) updateTopic(ctx context.Context, name string, change func(*metadata.Topic) error, validateOnly bool) error {
	for range 16 {
		old, ok, err := l.meta.Topic(ctx, name)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: %s", ErrUnknownPartition, name)
		}
		mt := old
		mt.Configs = maps.Clone(old.Configs)
		if err := change(&mt); err != nil || validateOnly {
			return err
		}
		err = l.meta.UpdateTopic(ctx, old, mt)
		if metadata.IsConflict(err) {
			continue
		}
		if err != nil {
			return err
		}
		l.applyTopic(mt)
		return nil
	}
	return fmt.Errorf("partition: update topic %s: too many concurrent changes", name)
}

func (l *Log) applyTopic(mt metadata.Topic) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.topics[mt.Name]
	if t == nil || t.ID != mt.ID {
		return
	}
	t.setConfig(mt.Configs, l.opts.BrokerConfig.Map())
	old := t.Partitions()
	if int(mt.Partitions) > len(old) {
		parts := append([]*Partition(nil), old...)
		for i := int32(len(old)); i < mt.Partitions; i++ {
			parts = append(parts, l.newPartition(t, i, metadata.PartitionState{}))
		}
		t.parts.Store(&parts)
	}
}

// BrokerConfig returns the dynamic broker configs the log resolves topic
// configs against.
func (l *Log) BrokerConfig() *config.Dynamic { return l.opts.BrokerConfig }

// brokerConfigChanged re-resolves every topic's configs against new
// dynamic broker configs. It holds l.mu, so a topic created concurrently
// sees either the new configs or this refresh.
func (l *Log) brokerConfigChanged(broker map[string]string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.setProducerExpiration(broker)
	for _, t := range l.topics {
		t.setConfig(t.cfg.Load().own, broker)
	}
}
