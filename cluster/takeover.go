package cluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/sediment-io/sediment/metadata"
)

// A takeover gives up what a gone wal-mode broker acknowledged and never
// committed, and must say exactly what that is. Before the broker's member
// record is marked taken over (which lets the controller move its
// partitions), each partition placed on it gets a new leader epoch from
// its committed offset on (metadata.TakeOverPartition), on the condition
// that the broker is still unregistered. Should the broker come back, even
// before any other broker has committed on the partition, its kept batches
// then no longer continue the log, and it drops them rather than commit
// them (as Kafka's old leader truncates to the new leader's log): what the
// report calls lost never shows up in the log.

// TakeoverReport is what a takeover did.
type TakeoverReport struct {
	// Member is the broker's member record as it was.
	Member Member
	// Partitions are the partitions placed on the broker (wal durability
	// only: an object-mode broker acknowledged only what it committed).
	Partitions []TakenPartition
}

// TakenPartition is one partition a takeover moves.
type TakenPartition struct {
	Topic     string
	TopicID   metadata.TopicID
	Partition int32
	// LostFrom is the committed offset: what the broker acknowledged at
	// or past it is lost. -1 when OwnedBy already owned the partition.
	LostFrom int64
	// OwnedBy is the broker that owned the partition already (its own
	// acquisition gave up the kept batches), -1 when none did.
	OwnedBy int32
}

// Takeover takes over a gone broker: for a wal-mode one it fences every
// partition placed on it (see above), then marks members/<node> taken
// over, so that the controller moves its partitions by force (the
// operator's `broker partitions takeover --from NODE --accept-loss`). kv is
// the cluster's metadata KV (etcdkv). It refuses while the broker is live;
// should the broker come back during the takeover, it stops with an error
// and the report names the partitions fenced so far, whose kept batches
// are lost all the same.
func Takeover(ctx context.Context, kv metadata.KV, node int32) (TakeoverReport, error) {
	if _, live, err := kv.Get(ctx, brokerKey(node)); err != nil || live {
		if err == nil {
			err = errBrokerLive(node)
		}
		return TakeoverReport{}, err
	}
	m, _, err := readMember(ctx, kv, node)
	if err != nil || m.TakenOver {
		return TakeoverReport{Member: m}, err
	}
	r := TakeoverReport{Member: m}
	if m.Durability == "wal" {
		if r.Partitions, err = fencePlaced(ctx, kv, node); err != nil {
			return r, err
		}
	}
	return r, markTakenOver(ctx, kv, node)
}

func readMember(ctx context.Context, kv metadata.KV, node int32) (Member, int64, error) {
	it, ok, err := kv.Get(ctx, memberKey(node))
	if err != nil {
		return Member{}, 0, err
	}
	if !ok {
		return Member{}, 0, errNoMember(node)
	}
	v, err := decodeMember(it.Value)
	if err != nil {
		return Member{}, 0, fmt.Errorf("cluster: decode %s: %w", it.Key, err)
	}
	return v.(Member), it.Version, nil
}

// markTakenOver sets the member record's TakenOver while the broker is
// unregistered.
func markTakenOver(ctx context.Context, kv metadata.KV, node int32) error {
	for range 8 {
		m, version, err := readMember(ctx, kv, node)
		if err != nil || m.TakenOver {
			return err
		}
		m.TakenOver = true
		cond := []metadata.Cond{{Key: memberKey(node), Version: version}, {Key: brokerKey(node)}}
		_, err = kv.Txn(ctx, cond, []metadata.Op{metadata.Put(memberKey(node), []byte(mustJSON(m)))})
		if err == nil {
			return nil
		}
		if !metadata.IsConflict(err) {
			return err
		}
		if _, live, gerr := kv.Get(ctx, brokerKey(node)); gerr == nil && live {
			return errBrokerLive(node)
		}
	}
	return errTakeoverRace(node)
}

// fencePlaced starts a new leader epoch, at the committed offset, of every
// partition placed on node, while node stays unregistered.
func fencePlaced(ctx context.Context, kv metadata.KV, node int32) ([]TakenPartition, error) {
	meta := metadata.NewStore(kv)
	topics, err := meta.Topics(ctx)
	if err != nil {
		return nil, err
	}
	gone := []metadata.Cond{{Key: brokerKey(node)}}
	var out []TakenPartition
	for _, t := range topics {
		placed, err := readPlacement(ctx, kv, placementKey(t.ID))
		if err != nil {
			return out, err
		}
		for p := range t.Partitions {
			if at(placed, p) != node {
				continue
			}
			tp := TakenPartition{Topic: t.Name, TopicID: t.ID, Partition: p, LostFrom: -1, OwnedBy: -1}
			tp.LostFrom, err = meta.TakeOverPartition(ctx, t.ID, p, gone)
			if err != nil {
				tp.LostFrom = -1
				if tp.OwnedBy, err = explainFenceFailure(ctx, kv, node, t.ID, p, err); err != nil {
					return out, err
				}
				if tp.OwnedBy < 0 {
					continue // deleted meanwhile
				}
			}
			out = append(out, tp)
		}
	}
	return out, nil
}

// explainFenceFailure returns the node that owns the partition when that
// is why it could not be fenced (its acquisition fenced it already), and
// an error otherwise: the broker came back, the topic was deleted
// (nothing to report then: -1, nil), or metadata failed.
func explainFenceFailure(ctx context.Context, kv metadata.KV, node int32, id metadata.TopicID, p int32, cause error) (int32, error) {
	if errors.Is(cause, metadata.ErrUnknownTopic) {
		return -1, nil
	}
	if !metadata.IsConflict(cause) {
		return -1, cause
	}
	if _, live, err := kv.Get(ctx, brokerKey(node)); err != nil || live {
		if err == nil {
			err = errBrokerLive(node)
		}
		return -1, err
	}
	it, ok, err := kv.Get(ctx, metadata.OwnerKey(id, p))
	if err != nil || !ok {
		return -1, fmt.Errorf("cluster: takeover of broker %d: %w", node, cause)
	}
	rec, err := metadata.DecodeOwner(it)
	if err != nil {
		return -1, err
	}
	return rec.NodeID, nil
}
