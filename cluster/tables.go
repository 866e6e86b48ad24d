package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sediment-io/sediment/metadata"
)

// Each table topic's converter runs on one broker: the one holding the
// topic's table slot, own/tables/<topic-id-hex>, on its session lease.
// The controller places the slots of every table topic together
// (placement/tables), sticky and balanced like the shards, and the
// ownership loop acquires, releases and drops them like partitions. The
// fence of a table slot cannot go into the catalog's commit (the Iceberg
// table is not in etcd): the converter checks it before each commit and
// relies on the catalog's own optimistic concurrency for the rest (see
// package table).

// TableOwner is the table converter as the cluster drives it.
type TableOwner interface {
	// AcquireTable starts converting a table topic, right after its own
	// key was written.
	AcquireTable(ctx context.Context, id metadata.TopicID) error
	// ReleaseTable stops converting it after the commit in flight.
	ReleaseTable(ctx context.Context, id metadata.TopicID) error
	// DropTable stops converting it at once: the slot is lost.
	DropTable(id metadata.TopicID)
}

// TableOwnerPrefix holds the own keys of the table slots.
const TableOwnerPrefix = "own/tables/"

// tablesPlacement is the controller's target owner of every table slot.
const tablesPlacement = "placement/tables"

// TableOwnerKey is the own key of a table topic's converter.
func TableOwnerKey(id metadata.TopicID) string { return TableOwnerPrefix + id.String() }

// ParseTableOwnerKey is the inverse of TableOwnerKey.
func ParseTableOwnerKey(key string) (metadata.TopicID, bool) {
	var id metadata.TopicID
	hex, found := strings.CutPrefix(key, TableOwnerPrefix)
	return id, found && id.UnmarshalText([]byte(hex)) == nil
}

// TableFence returns the condition that holds only while this broker holds
// the table slot of topic id; ok is false when it does not hold it now or
// the session is not valid.
func (n *Node) TableFence(id metadata.TopicID) (metadata.Cond, bool) {
	return n.fence(slot{table: true, topic: id})
}

// TableLeader returns the broker converting a table topic, from the own keys.
func (n *Node) TableLeader(id metadata.TopicID) (node int32, ok bool) {
	e, _, ok := n.owners.get(TableOwnerKey(id))
	if !ok {
		return -1, false
	}
	return e.value.(metadata.OwnerRecord).NodeID, true
}

// tableTarget computes the placement of the table slots: one per topic
// Config.IsTable accepts, in topic id order, each kept on its current
// owner where place keeps it. nil when nothing changes or no broker is
// live.
func (n *Node) tableTarget(topics []metadata.Topic, cur placementRecord, live []int32) *placementRecord {
	var ids []string
	for _, t := range topics {
		if n.cfg.IsTable != nil && n.cfg.IsTable(t.Configs) {
			ids = append(ids, t.ID.String())
		}
	}
	slices.Sort(ids)
	was := map[string]int32{}
	for i, id := range cur.Topics {
		if i < len(cur.Owners) {
			was[id] = cur.Owners[i]
		}
	}
	current := make([]int32, len(ids))
	for i, id := range ids {
		current[i] = -1
		if o, ok := was[id]; ok {
			current[i] = o
		}
	}
	name := func(i int) string { return "tables/" + ids[i] }
	owners := place(name, len(ids), current, live, func(int32) bool { return false })
	if owners == nil && len(ids) > 0 {
		return nil
	}
	if owners == nil {
		owners = []int32{}
	}
	next := placementRecord{Owners: owners, Topics: ids}
	if slices.Equal(next.Owners, cur.Owners) && slices.Equal(next.Topics, cur.Topics) {
		return nil
	}
	return &next
}

// wantedTables adds the table slots a placement/tables record puts on this
// node.
func (n *Node) wantedTables(rec placementRecord, want map[slot]bool) {
	if n.cfg.Tables == nil {
		return
	}
	for i, o := range rec.Owners {
		if o != n.cfg.NodeID || i >= len(rec.Topics) {
			continue
		}
		var id metadata.TopicID
		if id.UnmarshalText([]byte(rec.Topics[i])) == nil {
			want[slot{table: true, topic: id}] = true
		}
	}
}

// acquireTableKey writes a table slot's own key on the session's lease if
// it is absent. An unknown outcome is settled by reading the key back.
// ErrConflict while another broker holds it.
func (n *Node) acquireTableKey(s *session, id metadata.TopicID) (metadata.Cond, error) {
	key := TableOwnerKey(id)
	full := n.cfg.Prefix + key
	want := mustJSON(metadata.OwnerRecord{NodeID: n.cfg.NodeID, Lease: int64(s.lease)})
	resp, err := n.cfg.Client.Txn(s.ctx).If(clientv3.Compare(clientv3.CreateRevision(full), "=", 0)).
		Then(clientv3.OpPut(full, want, clientv3.WithLease(s.lease))).Commit()
	if err == nil && resp.Succeeded {
		return metadata.Cond{Key: key, Version: resp.Header.Revision}, nil
	}
	got, gerr := n.cfg.Client.Get(s.ctx, full)
	switch {
	case gerr != nil:
		return metadata.Cond{}, fmt.Errorf("cluster: acquire %s: %w (reading back: %w)", key, errors.Join(err, metadata.ErrUncertain), gerr)
	case len(got.Kvs) == 0 && err != nil:
		return metadata.Cond{}, fmt.Errorf("cluster: acquire %s: not applied: %w", key, err)
	case len(got.Kvs) == 0:
		return metadata.Cond{}, fmt.Errorf("cluster: acquire %s: released meanwhile: %w", key, metadata.ErrConflict)
	case string(got.Kvs[0].Value) == want:
		return metadata.Cond{Key: key, Version: got.Kvs[0].ModRevision}, nil
	}
	var held metadata.OwnerRecord
	_ = json.Unmarshal(got.Kvs[0].Value, &held) // only for the message
	return metadata.Cond{}, fmt.Errorf("cluster: acquire %s: held by node %d: %w", key, held.NodeID, metadata.ErrConflict)
}

// releaseTableKey deletes a table slot's own key if it is still at the
// fence's version; otherwise it was lost already and is left alone.
func (n *Node) releaseTableKey(ctx context.Context, fence metadata.Cond) error {
	full := n.cfg.Prefix + fence.Key
	resp, err := n.cfg.Client.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(full), "=", fence.Version)).
		Then(clientv3.OpDelete(full)).Commit()
	if err != nil {
		return fmt.Errorf("cluster: release %s: %w", fence.Key, err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("cluster: release %s: %w", fence.Key, metadata.ErrConflict)
	}
	return nil
}
