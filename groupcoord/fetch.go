package groupcoord

import (
	"sort"

	"github.com/sediment-io/sediment/metadata"
)

// FetchRequest is one group of an OffsetFetch.
type FetchRequest struct {
	Group string
	// Topics are the partitions asked for; nil asks for every committed
	// offset of the group.
	Topics []FetchTopic
	// RequireStable (v7+) waits until no commit of the group is in flight,
	// and answers ErrUnstableOffsetCommit for each partition with offsets
	// pending in an open transaction (KIP-447).
	RequireStable bool
}

// FetchTopic names partitions of one topic.
type FetchTopic struct {
	Topic      string
	Partitions []int32
}

// FetchResult answers one group of an OffsetFetch.
type FetchResult struct {
	Err    error
	Topics []FetchedTopic
}

// FetchedTopic is one topic's committed offsets. TopicID is the live
// topic's (zero when the topic does not exist).
type FetchedTopic struct {
	Topic      string
	TopicID    metadata.TopicID
	Partitions []FetchedOffset
}

// FetchedOffset is one partition's committed offset; Offset is -1 (and
// LeaderEpoch -1) when nothing is committed. Err is set (with Offset -1)
// when RequireStable asked and the partition has offsets pending in an
// open transaction: kerr.UnstableOffsetCommit.
type FetchedOffset struct {
	Partition   int32
	Offset      int64
	LeaderEpoch int32
	Metadata    string
	Err         error
}

// FetchOffsets returns a group's committed offsets. Offsets whose topic
// was deleted (or deleted and created again) are never returned. The result
// arrives at once, or with RequireStable once the group's commits in flight
// are durable.
func (c *Coordinator) FetchOffsets(req FetchRequest) <-chan FetchResult {
	out := make(chan FetchResult, 1)
	if c.closed.Load() {
		out <- FetchResult{Err: ErrNotCoordinator}
		return out
	}
	g, err := c.lookup(req.Group)
	if err != nil {
		out <- FetchResult{Err: err}
		return out
	}
	if g == nil {
		out <- c.fetchFrom(nil, req)
		return out
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.released {
		out <- FetchResult{Err: ErrNotCoordinator}
		return out
	}
	if g.state == StateDead {
		out <- c.fetchFrom(nil, req)
		return out
	}
	if req.RequireStable && g.inflight > 0 {
		g.stableWaiters = append(g.stableWaiters, func() {
			if g.released { // the shard moved while the commits were in flight
				out <- FetchResult{Err: ErrNotCoordinator}
				return
			}
			out <- c.fetchFrom(g, req)
		})
		return out
	}
	out <- c.fetchFrom(g, req)
	return out
}

// fetchFrom answers req from g's offsets (g nil: there is no group). The
// group's lock, if any, is held.
func (c *Coordinator) fetchFrom(g *group, req FetchRequest) FetchResult {
	var offsets map[metadata.GroupPartition]*offsetState
	unstable := func(metadata.GroupPartition) bool { return false }
	if g != nil {
		offsets = g.offsets
		if req.RequireStable {
			unstable = g.unstableLocked
		}
	}
	if req.Topics == nil {
		return FetchResult{Topics: c.allOffsets(offsets, unstable)}
	}
	var res FetchResult
	for _, t := range req.Topics {
		id, _, live := c.cluster.TopicPartitions(t.Topic)
		ft := FetchedTopic{Topic: t.Topic, TopicID: id}
		for _, p := range t.Partitions {
			fo := FetchedOffset{Partition: p, Offset: -1, LeaderEpoch: -1}
			tp := metadata.GroupPartition{Topic: t.Topic, Partition: p}
			if unstable(tp) {
				fo.Err = errUnstable(tp)
			} else if o := offsets[tp]; o != nil && live && o.TopicID == id {
				fo.Offset, fo.LeaderEpoch, fo.Metadata = o.Offset, o.LeaderEpoch, o.Metadata
			}
			ft.Partitions = append(ft.Partitions, fo)
		}
		res.Topics = append(res.Topics, ft)
	}
	return res
}

// allOffsets lists every live committed offset, by topic and partition;
// those unstable says are pending in a transaction are answered with an
// error instead.
func (c *Coordinator) allOffsets(offsets map[metadata.GroupPartition]*offsetState, unstable func(metadata.GroupPartition) bool) []FetchedTopic {
	tps := make([]metadata.GroupPartition, 0, len(offsets))
	for tp := range offsets {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
	var out []FetchedTopic
	for _, tp := range tps {
		o := offsets[tp]
		if !c.live(tp.Topic, o) {
			continue
		}
		if len(out) == 0 || out[len(out)-1].Topic != tp.Topic {
			out = append(out, FetchedTopic{Topic: tp.Topic, TopicID: o.TopicID})
		}
		ft := &out[len(out)-1]
		if unstable(tp) {
			ft.Partitions = append(ft.Partitions, FetchedOffset{Partition: tp.Partition, Offset: -1, LeaderEpoch: -1, Err: errUnstable(tp)})
			continue
		}
		ft.Partitions = append(ft.Partitions, FetchedOffset{Partition: tp.Partition, Offset: o.Offset, LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata})
	}
	return out
}

// live says whether an offset's topic still exists as the topic it was
// committed for.
func (c *Coordinator) live(topic string, o *offsetState) bool {
	id, _, ok := c.cluster.TopicPartitions(topic)
	return ok && id == o.TopicID
}
