package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// register writes brokers/<id> on the session's lease, if absent. A key
// already there belongs to a previous incarnation of this node whose lease
// has not expired yet (it was killed), or to another live broker started
// with the same --node-id. register waits up to that lease's TTL plus a
// margin for it to go; if it is still there, it is another broker's, and
// register fails naming both. Then it writes members/<id>.
func (n *Node) register(ctx context.Context, s *session) error {
	key := n.cfg.Prefix + brokerKey(n.cfg.NodeID)
	val := mustJSON(brokerRecord{NodeID: n.cfg.NodeID, Host: n.cfg.Host, Port: n.cfg.Port, Rack: n.cfg.Rack,
		Durability: n.cfg.Durability, StartedMs: time.Now().UnixMilli()})
	var waitUntil time.Time
	for {
		other, err := n.claimBrokerKey(ctx, s, key, val)
		if err != nil {
			return err
		}
		if other == nil {
			break
		}
		if waitUntil.IsZero() {
			ttl, err := n.cfg.Client.TimeToLive(ctx, clientv3.LeaseID(other.Lease))
			if err != nil {
				return fmt.Errorf("cluster: register node %d: %w", n.cfg.NodeID, err)
			}
			wait := time.Duration(max(ttl.GrantedTTL, 1))*time.Second + registerMargin
			waitUntil = time.Now().Add(wait)
			n.cfg.Logger.Info("cluster: node id registered by another session, waiting for its lease to expire "+
				"(a previous run of this broker that did not close?)", "node_id", n.cfg.NodeID, "other", addrOf(other), "wait", wait)
		}
		if !time.Now().Before(waitUntil) {
			return fmt.Errorf("%w: --node-id %d is taken by a live broker at %s: every broker needs its own --node-id",
				ErrNodeIDTaken, n.cfg.NodeID, addrOf(other))
		}
		n.waitDeleted(ctx, key, other.ModRevision, time.Until(waitUntil))
	}
	m := Member{NodeID: n.cfg.NodeID, Durability: n.cfg.Durability, Host: n.cfg.Host, Port: n.cfg.Port, Rack: n.cfg.Rack}
	if _, err := n.cfg.Client.Put(ctx, n.cfg.Prefix+memberKey(n.cfg.NodeID), mustJSON(m)); err != nil {
		return fmt.Errorf("cluster: write member %d: %w", n.cfg.NodeID, err)
	}
	return nil
}

// ErrNodeIDTaken: another live broker is registered with this node id.
var ErrNodeIDTaken = errors.New("cluster: node id taken")

// registerMargin is added to another registration's lease TTL before
// register decides that a live broker holds it.
const registerMargin = 2 * time.Second

// claimBrokerKey puts key on the session's lease if it is absent, and
// returns the key that is there otherwise (nil: the key is ours). An
// unknown outcome is settled by reading the key back.
func (n *Node) claimBrokerKey(ctx context.Context, s *session, key, val string) (*mvccpb.KeyValue, error) {
	for range 8 {
		resp, err := n.cfg.Client.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, val, clientv3.WithLease(s.lease))).Else(clientv3.OpGet(key)).Commit()
		if err == nil && resp.Succeeded {
			return nil, nil
		}
		var kvs []*mvccpb.KeyValue
		if err == nil {
			kvs = resp.Responses[0].GetResponseRange().Kvs
		} else {
			got, gerr := n.cfg.Client.Get(ctx, key)
			if gerr != nil {
				return nil, fmt.Errorf("cluster: register node %d: %w (reading back: %w)", n.cfg.NodeID, err, gerr)
			}
			kvs = got.Kvs
		}
		if len(kvs) == 0 {
			continue // not applied, and free now
		}
		if clientv3.LeaseID(kvs[0].Lease) == s.lease {
			return nil, nil
		}
		return kvs[0], nil
	}
	return nil, fmt.Errorf("cluster: register node %d: no answer settled the registration", n.cfg.NodeID)
}

func addrOf(kv *mvccpb.KeyValue) string {
	var b brokerRecord
	if json.Unmarshal(kv.Value, &b) != nil {
		return "(unreadable registration)"
	}
	return b.addr()
}

// waitDeleted waits up to d for key, at revision rev, to be deleted.
func (n *Node) waitDeleted(ctx context.Context, key string, rev int64, d time.Duration) {
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for resp := range n.cfg.Client.Watch(wctx, key, clientv3.WithRev(rev+1)) {
		for _, ev := range resp.Events {
			if ev.Type == mvccpb.DELETE {
				return
			}
		}
		if resp.Err() != nil {
			sleep(wctx, 100*time.Millisecond)
			return
		}
	}
}
