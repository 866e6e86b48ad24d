package partition

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/kvtest"
)

// TestMemKV holds the test KV to the backends' conformance suite.
func TestMemKV(t *testing.T) {
	kvtest.Run(t, func(*testing.T) metadata.KV { return newMemKV() })
}

// memKV is an in-memory metadata.KV for tests that commit many thousands
// of keys, which bbolt's fsync per transaction makes slow on a busy disk.
type memKV struct {
	mu    sync.Mutex // guards every field below
	items map[string]metadata.Item
	keys  []string // sorted
	rev   int64
}

func newMemKV() *memKV { return &memKV{items: map[string]metadata.Item{}} }

func (m *memKV) Get(_ context.Context, key string) (metadata.Item, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[key]
	return it, ok, nil
}

func (m *memKV) Range(_ context.Context, start, end string, limit int, reverse bool) ([]metadata.Item, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	lo, _ := slices.BinarySearch(m.keys, start)
	hi, _ := slices.BinarySearch(m.keys, end)
	keys := slices.Clone(m.keys[lo:max(lo, hi)])
	if reverse {
		slices.Reverse(keys)
	}
	if limit > 0 && len(keys) > limit {
		keys = keys[:limit]
	}
	out := make([]metadata.Item, len(keys))
	for i, k := range keys {
		out[i] = m.items[k]
	}
	return out, nil
}

func (m *memKV) Txn(_ context.Context, conds []metadata.Cond, ops []metadata.Op) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range conds {
		if m.items[c.Key].Version != c.Version {
			return 0, metadata.ErrConflict
		}
	}
	m.rev++
	for _, op := range ops {
		switch {
		case op.DeletePrefix:
			for _, k := range slices.Clone(m.keys) {
				if strings.HasPrefix(k, op.Key) {
					m.remove(k)
				}
			}
		case op.Delete:
			m.remove(op.Key)
		default:
			if _, ok := m.items[op.Key]; !ok {
				i, _ := slices.BinarySearch(m.keys, op.Key)
				m.keys = slices.Insert(m.keys, i, op.Key)
			}
			m.items[op.Key] = metadata.Item{Key: op.Key, Value: slices.Clone(op.Value), Version: m.rev}
		}
	}
	return m.rev, nil
}

func (m *memKV) remove(key string) {
	if _, ok := m.items[key]; !ok {
		return
	}
	delete(m.items, key)
	i, _ := slices.BinarySearch(m.keys, key)
	m.keys = slices.Delete(m.keys, i, i+1)
}

func (m *memKV) Close() error { return nil }
