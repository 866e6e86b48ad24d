package metadata

import (
	"strings"
	"sync"
)

// commitCacheMax bounds the commit cache; past it the cache starts over.
// It is far above the partitions one broker leads.
const commitCacheMax = 1 << 17

// commitCache holds, by partition key, the state the last successful
// CommitSegments wrote and the revision it was written at, so that the
// next commit of the partition plans from it instead of reading the state
// again: with 2,000 partitions in every upload that is 2,000 reads a
// commit (round trips with a remote store). The cache is only a guess at
// the stored state; every write it plans still carries the version
// condition, so a stale entry (another writer moved the partition since)
// fails the transaction and the retry reads every state afresh.
type commitCache struct {
	mu     sync.Mutex
	states map[string]PartitionState
}

// get returns the cached state of key.
func (c *commitCache) get(key string) (PartitionState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.states[key]
	return st, ok
}

// remember records the states a commit wrote at revision rev (a commit
// never writes producers into the state: they are deltas of their own).
func (c *commitCache) remember(keys []string, states []PartitionState, rev int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.states == nil || len(c.states)+len(keys) > commitCacheMax {
		c.states = make(map[string]PartitionState, len(keys))
	}
	for i, k := range keys {
		st := states[i]
		st.Producers, st.Version = nil, rev
		c.states[k] = st
	}
}

// forget drops the entries of the commits' partitions.
func (c *commitCache) forget(commits []SegmentCommit) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cm := range commits {
		delete(c.states, partKey(cm.Segment.Topic, cm.Segment.Partition))
	}
}

// drop drops the entry of one partition. Every other write of a partition
// state through the Store calls it, so that the broker's own retention and
// DeleteRecords do not turn its next upload commit into a lost
// compare-and-swap and a re-read of every partition in the object.
func (c *commitCache) drop(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.states, key)
}

// forgetTopic drops the entries of a topic's partitions.
func (c *commitCache) forgetTopic(id TopicID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	prefix := partPrefix(id)
	for k := range c.states {
		if strings.HasPrefix(k, prefix) {
			delete(c.states, k)
		}
	}
}
