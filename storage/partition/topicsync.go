package partition

import (
	"context"
	"fmt"
	"time"

	"github.com/sediment-io/sediment/metadata"
)

// SyncTopics re-reads the topics from metadata: it adds the topics and
// partitions other brokers created (not owned until Acquire), drops the
// ones deleted, and takes new topic configs. A topic deleted and created
// again under the same name is a new topic (a new id): the old one is
// dropped and the new one added. Idempotent; one range read when nothing
// changed.
func (l *Log) SyncTopics(ctx context.Context) error {
	l.topicsMu.Lock()
	defer l.topicsMu.Unlock()
	l.syncedAt.Store(time.Now().UnixNano())
	topics, err := l.meta.Topics(ctx)
	if err != nil {
		return fmt.Errorf("partition: sync topics: %w", err)
	}
	live := make(map[metadata.TopicID]bool, len(topics))
	for _, mt := range topics {
		live[mt.ID] = true
	}
	for _, t := range l.Topics() {
		if !live[t.ID] {
			l.forgetTopic(t.Name, t.ID)
			l.log.Info("topic deleted by another broker", "topic", t.Name, "id", t.ID.String())
		}
	}
	for _, mt := range topics {
		if _, ok := l.TopicByID(mt.ID); ok {
			l.applyTopic(mt)
			continue
		}
		t, err := l.syncedTopic(ctx, mt)
		if err != nil {
			return fmt.Errorf("partition: sync topics: %w", err)
		}
		l.mu.Lock()
		l.topics[t.Name], l.byID[t.ID] = t, t
		l.mu.Unlock()
		l.log.Info("topic created by another broker", "topic", mt.Name, "partitions", mt.Partitions, "id", mt.ID.String())
	}
	return nil
}

// syncedTopic builds a topic found in metadata. In a cluster its partitions
// start not owned and Acquire loads each one's state, so nothing is read
// now; on one node the topic is loaded whole.
func (l *Log) syncedTopic(ctx context.Context, mt metadata.Topic) (*Topic, error) {
	if l.opts.Ownership == nil {
		return l.loadTopic(ctx, mt)
	}
	t := newTopic(mt, l.opts.BrokerConfig.Map())
	parts := make([]*Partition, mt.Partitions)
	for i := range parts {
		parts[i] = l.newPartition(t, int32(i), metadata.PartitionState{})
	}
	t.parts.Store(&parts)
	return t, nil
}

// loadClusterTopic loads a topic at Open in a cluster: each partition's
// committed state and leader epochs, in one range read each, which WAL
// recovery needs; the producer state of a partition is read only if the WAL
// holds batches of it (loadReplayProducers), and Acquire reads the rest.
func (l *Log) loadClusterTopic(ctx context.Context, mt metadata.Topic) (*Topic, error) {
	t := newTopic(mt, l.opts.BrokerConfig.Map())
	states, err := l.meta.TopicPartitionStates(ctx, mt.ID)
	if err != nil {
		return nil, fmt.Errorf("partition: load %s: %w", mt.Name, err)
	}
	epochs, err := l.meta.TopicLeaderEpochs(ctx, mt.ID)
	if err != nil {
		return nil, fmt.Errorf("partition: load %s: %w", mt.Name, err)
	}
	parts := make([]*Partition, mt.Partitions)
	for i := range parts {
		st, ok := states[int32(i)]
		if !ok {
			return nil, fmt.Errorf("partition: %s/%d has no state in metadata", mt.Name, i)
		}
		parts[i] = l.newPartition(t, int32(i), st)
		parts[i].producersUnread = true
		if h, ok := epochs[int32(i)]; ok {
			parts[i].epochs = h
		}
	}
	t.parts.Store(&parts)
	return t, nil
}

// loadReplayProducers reads p's committed producer state before WAL
// recovery replays the first batch of it, so that the state it rebuilds is
// the committed one with the replayed batches applied.
func (l *Log) loadReplayProducers(ctx context.Context, p *Partition) error {
	if !p.producersUnread {
		return nil
	}
	list, err := l.meta.ProducerStates(ctx, p.topic.ID, p.index)
	if err != nil {
		return fmt.Errorf("partition: load producers of %s/%d: %w", p.topic.Name, p.index, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.producers = loadProducers(list)
	p.producers.expire(l.producerExpireBefore())
	p.producersUnread = false
	return nil
}

// SyncTopicsIfStale is SyncTopics unless one started within maxAge. A
// request naming a topic this broker does not know calls it, in a cluster:
// the topic may have been created on another broker a moment ago, before
// the watch of the topics brought it here. maxAge bounds what a client
// asking for topics that do not exist costs metadata.
func (l *Log) SyncTopicsIfStale(ctx context.Context, maxAge time.Duration) error {
	if l.opts.Ownership == nil {
		return nil // one node: every topic is created here
	}
	if time.Since(time.Unix(0, l.syncedAt.Load())) < maxAge {
		return nil
	}
	return l.SyncTopics(ctx)
}
