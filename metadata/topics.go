package metadata

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"
)

// CreateTopic stores a new topic and the initial state of its partitions,
// in one transaction when the KV takes it, else in pieces that stay
// invisible until the topic record is written (topicsplit.go). It fails
// with ErrTopicExists when the name is taken.
func (s *Store) CreateTopic(ctx context.Context, t Topic) error {
	cond := Cond{Key: topicKey(t.Name), Version: 0}
	ops := append([]Op{putJSON(topicKey(t.Name), t)}, partStateOps(t.ID, 0, t.Partitions)...)
	var err error
	if kvLimits(s.kv).fits(1, ops) {
		_, err = s.kv.Txn(ctx, []Cond{cond}, ops)
	} else {
		err = s.writeTopicSplit(ctx, cond, t, 0)
	}
	if IsConflict(err) {
		if _, ok, terr := s.Topic(ctx, t.Name); terr != nil || ok {
			return fmt.Errorf("metadata: create topic %q: %w", t.Name, ErrTopicExists)
		}
	}
	if err != nil {
		return fmt.Errorf("metadata: create topic %q: %w", t.Name, err)
	}
	return nil
}

// Topic returns the named topic; ok is false when it does not exist.
func (s *Store) Topic(ctx context.Context, name string) (Topic, bool, error) {
	var t Topic
	v, ok, err := s.getJSON(ctx, topicKey(name), &t)
	t.Version = v
	return t, ok, err
}

// Topics returns every topic, sorted by name.
func (s *Store) Topics(ctx context.Context) ([]Topic, error) {
	items, err := s.kv.Range(ctx, "topics/", PrefixEnd("topics/"), 0, false)
	if err != nil {
		return nil, err
	}
	out := make([]Topic, 0, len(items))
	for _, it := range items {
		var t Topic
		if err := jsonDecode(it, &t); err != nil {
			return nil, err
		}
		t.Version = it.Version
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// UpdateTopic replaces the topic if it is still at t.Version (else
// ErrConflict). Partitions may only grow; new partitions get an empty
// state, written with the topic record when one transaction takes them,
// else first and in pieces (topicsplit.go). While another grow of the topic
// is under way, or an interrupted one is not cleaned up, a grow fails with
// ErrTopicBusy; a change of configs alone does not wait for it.
func (s *Store) UpdateTopic(ctx context.Context, old, t Topic) error {
	if t.Partitions < old.Partitions || t.ID != old.ID || t.Name != old.Name {
		return fmt.Errorf("metadata: update topic %q: partitions may only grow and the id never changes", t.Name)
	}
	cond := Cond{Key: topicKey(t.Name), Version: old.Version}
	ops := append([]Op{putJSON(topicKey(t.Name), t)}, partStateOps(t.ID, old.Partitions, t.Partitions)...)
	conds := []Cond{cond}
	if t.Partitions > old.Partitions { // an interrupted grow's cleanup must not delete what this one counts
		conds = append(conds, Cond{Key: pendingTopicKey(t.ID)})
	}
	var err error
	if kvLimits(s.kv).fits(len(conds), ops) {
		_, err = s.kv.Txn(ctx, conds, ops)
	} else {
		err = s.writeTopicSplit(ctx, cond, t, old.Partitions)
	}
	if IsConflict(err) {
		err = s.pendingConflict(ctx, t.ID, err)
	}
	if err != nil {
		return fmt.Errorf("metadata: update topic %q: %w", t.Name, err)
	}
	return nil
}

// DeleteTopic deletes the topic in one small transaction: the topic and
// its partitions' states and leader-epoch histories go (with a grow of it
// written in pieces that did not finish), and a DeletedTopic record says that its index
// is still to be released. From then on the name is free, and a commit for
// one of its partitions finds no state and is skipped, so nothing is added
// to the index any more. ReleaseDeletedTopic then drops the index a chunk
// at a time, and with it the topic's references to objects. Until then the
// objects stay: a crash in between only delays their release (the
// maintenance loop runs ReleaseDeletedTopics). One transaction over the
// whole index would conflict with every upload and compaction of a busy
// topic of thousands of partitions.
func (s *Store) DeleteTopic(ctx context.Context, t Topic) error {
	_, err := s.kv.Txn(ctx, []Cond{{Key: topicKey(t.Name), Version: t.Version}}, []Op{
		Delete(topicKey(t.Name)), DeletePrefix(partPrefix(t.ID)), DeletePrefix(epochPrefix(t.ID)), DeletePrefix(producerPrefix(t.ID)),
		Delete(pendingTopicKey(t.ID)), putJSON(deletedTopicKey(t.ID), DeletedTopic{Name: t.Name, ID: t.ID}),
	})
	if err != nil {
		return fmt.Errorf("metadata: delete topic %q: %w", t.Name, err)
	}
	s.commits.forgetTopic(t.ID)
	return nil
}

// DeletedTopic is the record of a deleted topic whose index is not
// released yet.
type DeletedTopic struct {
	Name string  `json:"name"`
	ID   TopicID `json:"id"`
}

func deletedTopicKey(id TopicID) string { return "deleted-topics/" + id.String() }

// releaseChunk is how many index entries one transaction of
// ReleaseDeletedTopic drops, on a KV without limits.
const releaseChunk = 256

// releaseChunkLen is releaseChunk within the KV's limits: each entry adds
// a condition and a delete, and the object it points into at most a
// condition and two writes.
func (s *Store) releaseChunkLen() int {
	if l := kvLimits(s.kv); l.MaxOps > 0 {
		return max(1, min(releaseChunk, l.MaxOps/3))
	}
	return releaseChunk
}

// ReleaseDeletedTopic drops the index of a topic DeleteTopic deleted, a
// chunk of entries per transaction, lowering the references of the objects
// they point into (an object no longer referenced becomes garbage, deleted
// after grace), and then the topic's DeletedTopic record.
func (s *Store) ReleaseDeletedTopic(ctx context.Context, id TopicID, grace time.Duration) error {
	// Each chunk removes at least one entry, and nothing adds any: the
	// bound is far above any index.
	for range 1 << 24 {
		done, err := s.releaseIndexChunk(ctx, id, grace)
		if err != nil {
			return fmt.Errorf("metadata: release deleted topic %s: %w", id, err)
		}
		if done {
			// Producer keys went with the topic; this also takes what a
			// fold racing with the deletion wrote after it.
			_, err := s.kv.Txn(ctx, nil, []Op{Delete(deletedTopicKey(id)), DeletePrefix(producerPrefix(id))})
			return err
		}
	}
	return fmt.Errorf("metadata: release deleted topic %s: index never ends", id)
}

// releaseIndexChunk drops up to releaseChunk of the topic's index entries
// and reports whether there were none left.
func (s *Store) releaseIndexChunk(ctx context.Context, id TopicID, grace time.Duration) (done bool, err error) {
	for range maxCASRetries {
		items, err := s.kv.Range(ctx, indexPrefix(id), PrefixEnd(indexPrefix(id)), s.releaseChunkLen(), false)
		if err != nil || len(items) == 0 {
			return err == nil, err
		}
		segs, err := s.releaseChunkSegments(ctx, items)
		if err != nil {
			return false, err
		}
		delta := map[string]int{}
		var conds []Cond
		var ops []Op
		for i := range segs {
			conds = append(conds, Cond{Key: items[i].Key, Version: items[i].Version})
			ops = append(ops, Delete(items[i].Key))
		}
		if err := releaseDelta(delta, segs); err != nil {
			return false, err
		}
		rc, ro, err := s.refPlan(ctx, delta, grace)
		if err == nil {
			_, err = s.kv.Txn(ctx, append(conds, rc...), append(ops, ro...))
		}
		if !IsConflict(err) {
			return false, err
		}
	}
	return false, ErrTooManyRetries
}

// releaseChunkSegments decodes the oldest of items, manifest entries with
// their folded entries, as many as release at most releaseChunkLen
// objects' references (at least one).
func (s *Store) releaseChunkSegments(ctx context.Context, items []Item) ([]Segment, error) {
	var segs []Segment
	w := 0
	for _, it := range items {
		var seg Segment
		if err := jsonDecode(it, &seg); err != nil {
			return nil, err
		}
		folded, err := s.withFolded(ctx, []Segment{seg})
		if err != nil {
			return nil, err
		}
		seg = folded[0]
		if w += ReleaseWeight(seg); len(segs) > 0 && w > s.releaseChunkLen() {
			break
		}
		segs = append(segs, seg)
	}
	return segs, nil
}

// minPendingGrace is the least grace ReleaseDeletedTopics gives a create
// or grow written in pieces: enough for the largest topic on a slow etcd.
const minPendingGrace = 10 * time.Minute

// ReleaseDeletedTopics runs ReleaseDeletedTopic for every deleted topic
// whose index is not released yet, and abandons the creates and grows
// written in pieces that never finished (ReleasePendingTopics, after at
// least minPendingGrace).
func (s *Store) ReleaseDeletedTopics(ctx context.Context, grace time.Duration) error {
	items, err := s.kv.Range(ctx, "deleted-topics/", PrefixEnd("deleted-topics/"), 0, false)
	if err != nil {
		return err
	}
	var errs []error
	for _, it := range items {
		var d DeletedTopic
		if err := jsonDecode(it, &d); err != nil {
			errs = append(errs, err) // the others are still released
			continue
		}
		if err := s.ReleaseDeletedTopic(ctx, d.ID, grace); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, s.ReleasePendingTopics(ctx, max(grace, minPendingGrace)))
	return errors.Join(errs...)
}
