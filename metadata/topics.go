package metadata

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// CreateTopic stores a new topic and the initial state of its partitions in
// one transaction. It fails with ErrTopicExists when the name is taken.
func (s *Store) CreateTopic(ctx context.Context, t Topic) error {
	ops := []Op{putJSON(topicKey(t.Name), t)}
	for p := int32(0); p < t.Partitions; p++ {
		ops = append(ops, putJSON(partKey(t.ID, p), PartitionState{}))
	}
	_, err := s.kv.Txn(ctx, []Cond{{Key: topicKey(t.Name), Version: 0}}, ops)
	if IsConflict(err) {
		return fmt.Errorf("metadata: create topic %q: %w", t.Name, ErrTopicExists)
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
// ErrConflict). Partitions may only grow; new partitions get an empty state.
func (s *Store) UpdateTopic(ctx context.Context, old, t Topic) error {
	if t.Partitions < old.Partitions || t.ID != old.ID || t.Name != old.Name {
		return fmt.Errorf("metadata: update topic %q: partitions may only grow and the id never changes", t.Name)
	}
	ops := []Op{putJSON(topicKey(t.Name), t)}
	for p := old.Partitions; p < t.Partitions; p++ {
		ops = append(ops, putJSON(partKey(t.ID, p), PartitionState{}))
	}
	_, err := s.kv.Txn(ctx, []Cond{{Key: topicKey(t.Name), Version: old.Version}}, ops)
	if err != nil {
		return fmt.Errorf("metadata: update topic %q: %w", t.Name, err)
	}
	return nil
}

// DeleteTopic removes the topic, its partition states and its object index
// if it is still at t.Version. Objects its segments referenced lose those
// references (and become garbage when nothing else uses them).
func (s *Store) DeleteTopic(ctx context.Context, t Topic, grace time.Duration) error {
	for range maxCASRetries {
		items, err := s.kv.Range(ctx, indexPrefix(t.ID), PrefixEnd(indexPrefix(t.ID)), 0, false)
		if err != nil {
			return err
		}
		delta := map[string]int{}
		conds := []Cond{{Key: topicKey(t.Name), Version: t.Version}}
		for _, it := range items {
			var seg Segment
			if err := jsonDecode(it, &seg); err != nil {
				return err
			}
			delta[seg.Object]--
			conds = append(conds, Cond{Key: it.Key, Version: it.Version})
		}
		rc, ro, err := s.refPlan(ctx, delta, grace)
		if err != nil {
			return err
		}
		ops := []Op{Delete(topicKey(t.Name)), DeletePrefix(partPrefix(t.ID)), DeletePrefix(indexPrefix(t.ID))}
		_, err = s.kv.Txn(ctx, append(conds, rc...), append(ops, ro...))
		if err == nil {
			return nil
		}
		if !IsConflict(err) {
			return fmt.Errorf("metadata: delete topic %q: %w", t.Name, err)
		}
		cur, ok, gerr := s.Topic(ctx, t.Name)
		if gerr != nil || !ok || cur.Version != t.Version {
			return fmt.Errorf("metadata: delete topic %q: %w", t.Name, err) // the topic itself changed
		}
	}
	return fmt.Errorf("metadata: delete topic %q: %w", t.Name, ErrTooManyRetries)
}
