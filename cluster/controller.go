package cluster

import (
	"context"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/sediment-io/sediment/metadata"
)

// placementPeriod: the controller recomputes at least this often, besides
// on every change of the brokers, members, topics or placement.
const placementPeriod = 5 * time.Second

// campaign runs for the controller in this session, and leads once
// elected, until the session's work ends. The election runs on the
// session's lease, which this node keeps alive itself: the
// concurrency.Session is orphaned at once so that its keep-alives cannot
// outlast the node's own deadline.
func (n *Node) campaign(s *session) {
	cs, err := concurrency.NewSession(n.cfg.Client, concurrency.WithLease(s.lease), concurrency.WithContext(s.work))
	if err != nil {
		return // the session is ending
	}
	cs.Orphan()
	e := concurrency.NewElection(cs, n.cfg.Prefix+controllerPrefix)
	for s.work.Err() == nil {
		if err := e.Campaign(s.work, strconv.Itoa(int(n.cfg.NodeID))); err != nil {
			sleep(s.work, time.Second)
			continue
		}
		s.controller.Store(true)
		n.cfg.Logger.Info("cluster: elected controller", "node_id", n.cfg.NodeID)
		n.lead(s, e)
		s.controller.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		e.Resign(ctx) //nolint:errcheck // best effort: the lease's end removes the key too
		cancel()
	}
}

// lead computes the placement while this node is the controller.
func (n *Node) lead(s *session, e *concurrency.Election) {
	t := time.NewTicker(placementPeriod)
	defer t.Stop()
	for s.work.Err() == nil {
		if err := n.computePlacement(s.work, e); err != nil && s.work.Err() == nil {
			n.cfg.Logger.Warn("cluster: computing the placement failed, retrying", "err", err)
		}
		select {
		case <-s.work.Done():
		case <-n.ctlKick:
		case <-t.C:
		}
	}
}

// computePlacement writes the target owners of every partition and shard
// where they changed.
func (n *Node) computePlacement(ctx context.Context, e *concurrency.Election) error {
	topics, err := n.cfg.Meta.Topics(ctx)
	if err != nil {
		return err
	}
	live := n.liveNodes()
	waited := n.waitedFor()
	current := n.placements.snapshot()
	seen := map[string]bool{shardsPlacement: true, tablesPlacement: true}
	for _, t := range topics {
		key := placementKey(t.ID)
		seen[key] = true
		name := func(i int) string { return t.ID.String() + "/" + strconv.Itoa(i) }
		if err := n.writePlacement(ctx, e, key, current[key], place(name, int(t.Partitions), owners(current[key]), live, waited)); err != nil {
			return err
		}
	}
	// A shard waits for no gone broker: its groups and offsets are in etcd
	// only, never in a WAL, and its groups would stall while it waited.
	name := func(i int) string { return "shards/" + strconv.Itoa(i) }
	cur := current[shardsPlacement]
	if err := n.writePlacement(ctx, e, shardsPlacement, cur, place(name, Shards, owners(cur), live, waitsForNone)); err != nil {
		return err
	}
	if err := n.writeTablePlacement(ctx, e, topics, current[tablesPlacement], live); err != nil {
		return err
	}
	for key, cur := range current {
		if !seen[key] && strings.HasPrefix(key, placementPrefix) {
			if err := n.casPlacement(ctx, e, key, cur.modRev, clientv3.OpDelete(n.cfg.Prefix+key)); err != nil {
				return err
			}
		}
	}
	return nil
}

func owners(e entry) []int32 {
	if e.value == nil {
		return nil
	}
	return e.value.(placementRecord).Owners
}

func (n *Node) writePlacement(ctx context.Context, e *concurrency.Election, key string, cur entry, target []int32) error {
	if target == nil || reflect.DeepEqual(target, owners(cur)) {
		return nil
	}
	return n.casPlacement(ctx, e, key, cur.modRev, clientv3.OpPut(n.cfg.Prefix+key, mustJSON(placementRecord{Owners: target})))
}

func (n *Node) writeTablePlacement(ctx context.Context, e *concurrency.Election, topics []metadata.Topic, cur entry, live []int32) error {
	var rec placementRecord
	if cur.value != nil {
		rec = cur.value.(placementRecord)
	}
	next := n.tableTarget(topics, rec, live)
	if next == nil {
		return nil
	}
	return n.casPlacement(ctx, e, tablesPlacement, cur.modRev, clientv3.OpPut(n.cfg.Prefix+tablesPlacement, mustJSON(*next)))
}

// casPlacement applies op if key is still at rev (as the view saw it) and
// this node still leads the election. A lost compare is no error: the
// views catch up and the next pass computes again.
func (n *Node) casPlacement(ctx context.Context, e *concurrency.Election, key string, rev int64, op clientv3.Op) error {
	_, err := n.cfg.Client.Txn(ctx).If(
		clientv3.Compare(clientv3.ModRevision(n.cfg.Prefix+key), "=", rev),
		clientv3.Compare(clientv3.CreateRevision(e.Key()), "=", e.Rev()),
	).Then(op).Commit()
	return err
}

// liveNodes returns the registered brokers' ids, sorted.
func (n *Node) liveNodes() []int32 {
	var live []int32
	for _, e := range n.brokers.snapshot() {
		live = append(live, e.value.(brokerRecord).NodeID)
	}
	sort.Slice(live, func(i, j int) bool { return live[i] < live[j] })
	return live
}

func waitsForNone(int32) bool { return false }

// waitedFor returns whether a gone broker's partitions wait for it.
func (n *Node) waitedFor() func(int32) bool {
	members := n.members.snapshot()
	return func(node int32) bool {
		e, ok := members[memberKey(node)]
		return ok && e.value.(Member).waitedFor()
	}
}
