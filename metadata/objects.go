package metadata

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// ObjectRecord counts the index segments that reference one data object.
// When the count reaches zero the object becomes garbage: a GarbageRecord
// replaces it, and the object is deleted once its grace period is over
// (readers that found a segment just before it went away may still read).
type ObjectRecord struct {
	Refs      int   `json:"refs"`
	CreatedMs int64 `json:"created_ms"`
}

// GarbageRecord marks an unreferenced object for deletion.
type GarbageRecord struct {
	Key           string `json:"key"`
	DeleteAfterMs int64  `json:"delete_after_ms"`
	Version       int64  `json:"-"`
}

func objectRecordKey(obj string) string { return "objects/" + obj }

func garbageRecordKey(obj string) string { return "garbage/" + obj }

// refPlan turns reference-count changes into transaction conditions and
// operations: counts are compare-and-swapped; objects left without
// references become garbage after grace.
func (s *Store) refPlan(ctx context.Context, delta map[string]int, grace time.Duration) ([]Cond, []Op, error) {
	keys := make([]string, 0, len(delta))
	for k := range delta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var conds []Cond
	var ops []Op
	for _, obj := range keys {
		var rec ObjectRecord
		v, ok, err := s.getJSON(ctx, objectRecordKey(obj), &rec)
		if err != nil {
			return nil, nil, err
		}
		if !ok { // released meanwhile: what the caller read is stale
			return nil, nil, fmt.Errorf("metadata: object %s has no reference record: %w", obj, ErrConflict)
		}
		conds = append(conds, Cond{Key: objectRecordKey(obj), Version: v})
		rec.Refs += delta[obj]
		if rec.Refs > 0 {
			ops = append(ops, putJSON(objectRecordKey(obj), rec))
			continue
		}
		ops = append(ops, Delete(objectRecordKey(obj)),
			putJSON(garbageRecordKey(obj), GarbageRecord{Key: obj, DeleteAfterMs: time.Now().Add(grace).UnixMilli()}))
	}
	return conds, ops, nil
}

// ObjectKnown reports whether metadata knows the object: referenced by
// segments, or garbage waiting for deletion. An object it does not know is
// an orphan (its PUT landed, its commit never did).
func (s *Store) ObjectKnown(ctx context.Context, obj string) (bool, error) {
	for _, k := range []string{objectRecordKey(obj), garbageRecordKey(obj)} {
		_, ok, err := s.kv.Get(ctx, k)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// Object returns an object's reference record.
func (s *Store) Object(ctx context.Context, obj string) (ObjectRecord, bool, error) {
	var rec ObjectRecord
	_, ok, err := s.getJSON(ctx, objectRecordKey(obj), &rec)
	return rec, ok, err
}

// Garbage returns up to limit garbage records, oldest key first.
func (s *Store) Garbage(ctx context.Context, limit int) ([]GarbageRecord, error) {
	items, err := s.kv.Range(ctx, "garbage/", PrefixEnd("garbage/"), limit, false)
	if err != nil {
		return nil, err
	}
	out := make([]GarbageRecord, len(items))
	for i, it := range items {
		if err := jsonDecode(it, &out[i]); err != nil {
			return nil, err
		}
		out[i].Version = it.Version
	}
	return out, nil
}

// ForgetGarbage removes a garbage record once its object is deleted.
func (s *Store) ForgetGarbage(ctx context.Context, g GarbageRecord) error {
	_, err := s.kv.Txn(ctx, []Cond{{Key: garbageRecordKey(g.Key), Version: g.Version}}, []Op{Delete(garbageRecordKey(g.Key))})
	return err
}

// MarkGarbage records that obj, which no segment references (an object a
// failed compaction wrote, say), may be deleted after grace.
func (s *Store) MarkGarbage(ctx context.Context, obj string, grace time.Duration) error {
	rec := GarbageRecord{Key: obj, DeleteAfterMs: time.Now().Add(grace).UnixMilli()}
	_, err := s.kv.Txn(ctx, []Cond{{Key: objectRecordKey(obj), Version: 0}}, []Op{putJSON(garbageRecordKey(obj), rec)})
	return err
}
