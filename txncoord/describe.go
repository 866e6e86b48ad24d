package txncoord

import (
	"fmt"
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
)

// offsetsTopic is the topic Kafka names a group's offsets partition by in
// a transaction; its partition is the group's coordinator shard.
const offsetsTopic = "__consumer_offsets"

// Describe describes transactional ids (DescribeTransactions). Each
// Description's Err is NOT_COORDINATOR (or COORDINATOR_LOAD_IN_PROGRESS)
// when the id's shard is not served here, TRANSACTIONAL_ID_NOT_FOUND when
// it has no record. Partitions include, as in Kafka, the offsets
// partition (__consumer_offsets, the group's shard) of each group whose
// offsets are in the transaction.
func (c *Coordinator) Describe(ids []string) []Description {
	out := make([]Description, len(ids))
	for i, id := range ids {
		out[i] = c.describe(id)
	}
	return out
}

func (c *Coordinator) describe(id string) Description {
	d := Description{TransactionalID: id}
	sh, err := c.enter(id)
	if err != nil {
		d.Err = err
		return d
	}
	defer sh.wg.Done()
	t, err := sh.lockTxn(id, false)
	if err == nil && (t == nil || !t.exists()) {
		err = fmt.Errorf("txncoord: transactional id %q: %w", id, kerr.TransactionalIDNotFound)
	}
	if err != nil {
		if t != nil {
			t.mu.Unlock()
		}
		d.Err = err
		return d
	}
	r := t.rec
	t.mu.Unlock()
	d.State, d.ProducerID, d.ProducerEpoch, d.TimeoutMs, d.StartTimeMs = r.state, r.pid, r.epoch, r.timeoutMs, r.startMs
	d.Partitions = slices.Clone(r.partitions)
	for _, g := range r.groups {
		tp := GroupPartition(g)
		if !slices.Contains(d.Partitions, tp) {
			d.Partitions = append(d.Partitions, tp)
		}
	}
	sort.Slice(d.Partitions, func(i, j int) bool {
		a, b := d.Partitions[i], d.Partitions[j]
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	return d
}

// List lists the transactional ids of the shards served here
// (ListTransactions), sorted by id: those in one of f.States (none: any),
// of one of f.ProducerIDs (none: any), and, with f.MinDurationMs > 0,
// whose transaction started more than that long ago (Kafka compares with
// the last start, which an idle id keeps).
func (c *Coordinator) List(f ListFilter) []Listing {
	now := c.now()
	var out []Listing
	for _, sh := range c.ownedShards() {
		for _, t := range sh.snapshot() {
			t.mu.Lock()
			r, ok := t.rec, t.exists()
			t.mu.Unlock()
			if ok && f.matches(r, now) {
				out = append(out, Listing{TransactionalID: t.id, ProducerID: r.pid, State: r.state})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TransactionalID < out[j].TransactionalID })
	return out
}

func (f ListFilter) matches(r record, now int64) bool {
	switch {
	case r.state == Dead:
		return false
	case len(f.States) > 0 && !slices.Contains(f.States, r.state):
		return false
	case len(f.ProducerIDs) > 0 && !slices.Contains(f.ProducerIDs, r.pid):
		return false
	case f.MinDurationMs > 0 && now-r.startMs <= f.MinDurationMs:
		return false
	}
	return true
}

// snapshot returns the shard's txns.
func (sh *shard) snapshot() []*txn {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	out := make([]*txn, 0, len(sh.txns))
	for _, t := range sh.txns {
		out = append(out, t)
	}
	return out
}
