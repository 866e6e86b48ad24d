package groupcoord

import "github.com/sediment-io/sediment/metadata"

// DeleteOffsetsResult answers an OffsetDelete: Err for the group, else one
// error per partition.
type DeleteOffsetsResult struct {
	Err        error
	Partitions []error
}

// DeleteOffsets deletes committed offsets of a group, durably, and those
// pending for their partitions in transactions (as Kafka does). A group in
// use keeps the offsets of topics its members subscribe to
// (ErrSubscribedToTopic); a group in use whose subscriptions cannot be read
// (not a consumer group) refuses altogether (ErrNonEmptyGroup).
func (c *Coordinator) DeleteOffsets(group string, parts []metadata.GroupPartition) <-chan DeleteOffsetsResult {
	out := make(chan DeleteOffsetsResult, 1)
	fail := func(err error) <-chan DeleteOffsetsResult {
		out <- DeleteOffsetsResult{Err: err}
		return out
	}
	if err := c.checkGroupID(group); err != nil {
		return fail(err)
	}
	g, err := c.lookup(group)
	if err != nil {
		return fail(err)
	}
	if g == nil {
		return fail(ErrGroupNotFound)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.released {
		return fail(ErrNotCoordinator)
	}
	if g.state == StateDead {
		return fail(ErrGroupNotFound)
	}
	subscribed := func(string) bool { return false }
	if g.state != StateEmpty {
		if g.protocolType != consumerProtocolType {
			return fail(ErrNonEmptyGroup)
		}
		subs, known := g.subscribedLocked()
		subscribed = func(topic string) bool { return !known || subs[topic] }
	}
	g.deleteOffsetsLocked(parts, subscribed, out)
	return out
}

func (g *group) deleteOffsetsLocked(parts []metadata.GroupPartition, subscribed func(string) bool, out chan DeleteOffsetsResult) {
	errs := make([]error, len(parts))
	var writes []metadata.OffsetWrite
	var written []int
	for i, tp := range parts {
		_, n, ok := g.c.cluster.TopicPartitions(tp.Topic)
		switch {
		case !ok || tp.Partition < 0 || tp.Partition >= n:
			errs[i] = ErrUnknownTopicOrPartition
		case subscribed(tp.Topic):
			errs[i] = ErrSubscribedToTopic
		case g.offsets[tp] != nil || g.unstableLocked(tp):
			writes = append(writes, metadata.OffsetWrite{GroupPartition: tp})
			written = append(written, i)
		}
	}
	if len(writes) == 0 {
		out <- DeleteOffsetsResult{Partitions: errs}
		return
	}
	g.c.lg.Info("group offsets deleted", "group", g.id, "partitions", len(writes), "reason", "OffsetDelete")
	g.queueDeletesLocked(writes, func(werrs []error) {
		for j, i := range written {
			errs[i] = werrs[j]
		}
		out <- DeleteOffsetsResult{Partitions: errs}
	})
}

// queueDeletesLocked deletes the committed offsets of writes as
// queueOffsetsLocked does and, as Kafka's tombstone of a partition does,
// the offsets pending for them in transactions, in the same changes.
func (g *group) queueDeletesLocked(writes []metadata.OffsetWrite, done func([]error)) {
	if !g.hasTxnOffsetsLocked() {
		g.queueOffsetsLocked(writes, done)
		return
	}
	perChange := max(1, maxChangeOffsets/(1+len(g.txnOffsets)))
	ranges := cutRanges(len(writes), perChange, func(i int) int { return writeBytes(writes[i]) * (1 + len(g.txnOffsets)) })
	g.queueSplitLocked(ranges, len(writes), func(start, end int) metadata.GroupWrite {
		w := metadata.GroupWrite{Offsets: writes[start:end]}
		for _, o := range writes[start:end] {
			for pid, byTP := range g.txnOffsets {
				if byTP[o.GroupPartition] != nil {
					w.TxnOffsets = append(w.TxnOffsets, metadata.TxnOffsetWrite{ProducerID: pid, GroupPartition: o.GroupPartition})
				}
			}
		}
		return w
	}, done)
}
