package metadata

import (
	"context"
	"errors"
	"fmt"
)

// ErrNotOwner: a fence condition failed: the writer no longer owns a
// partition it wrote.
var ErrNotOwner = errors.New("metadata: not the owner: the partition's ownership moved")

// NotOwnerError names the partitions whose fence failed; nothing was
// written. It matches ErrNotOwner.
type NotOwnerError struct{ Partitions []PartitionKey }

func (e *NotOwnerError) Error() string {
	if len(e.Partitions) == 1 {
		k := e.Partitions[0]
		return fmt.Sprintf("%v: partition %s/%d", ErrNotOwner, k.Topic, k.Partition)
	}
	return fmt.Sprintf("%v: %d partitions", ErrNotOwner, len(e.Partitions))
}

// Unwrap returns ErrNotOwner.
func (e *NotOwnerError) Unwrap() error { return ErrNotOwner }

// IsNotOwner reports whether err is a failed fence.
func IsNotOwner(err error) bool { return errors.Is(err, ErrNotOwner) }

// A fence is the condition that holds only while a broker owns a partition:
// its owner key at the revision the broker wrote it (see CONTRACT: own/).
// Every write about a partition's log may carry one; nil or none means one
// node, unfenced. A lost compare-and-swap is checked against the fences
// before anything is retried: a failed fence is final, since retrying on
// fresh state would let a broker that lost the partition write it again.

// fenceHolds reports whether the fence still holds, by reading its key.
func (s *Store) fenceHolds(ctx context.Context, f Cond) (bool, error) {
	it, ok, err := s.kv.Get(ctx, f.Key)
	if err != nil {
		return false, fmt.Errorf("metadata: read fence %s: %w", f.Key, err)
	}
	if !ok {
		return f.Version == 0, nil
	}
	return it.Version == f.Version, nil
}

// failedFences returns the partitions among keys whose fence (fences[i],
// nil: unfenced) no longer holds.
func (s *Store) failedFences(ctx context.Context, keys []PartitionKey, fences []*Cond) ([]PartitionKey, error) {
	var failed []PartitionKey
	for i, f := range fences {
		if f == nil {
			continue
		}
		ok, err := s.fenceHolds(ctx, *f)
		if err != nil {
			return nil, err
		}
		if !ok {
			failed = append(failed, keys[i])
		}
	}
	return failed, nil
}

// checkFence turns a lost compare-and-swap of a write about one partition
// into a *NotOwnerError when its fence no longer holds; it returns nil
// when the fence holds (or there is none) and the caller may retry.
func (s *Store) checkFence(ctx context.Context, id TopicID, p int32, fence []Cond) error {
	for _, f := range fence {
		ok, err := s.fenceHolds(ctx, f)
		if err != nil {
			return err
		}
		if !ok {
			return &NotOwnerError{Partitions: []PartitionKey{{Topic: id, Partition: p}}}
		}
	}
	return nil
}

// fenced returns conds with the fences added.
func fenced(conds []Cond, fence []Cond) []Cond {
	return append(conds, fence...)
}
