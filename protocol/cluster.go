package protocol

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/partition"
)

// ClusterView is the cluster as the protocol answers it: the live brokers,
// the controller, and the owner of each partition and coordinator. Its
// answers may lag the cluster by a watch's delay; safety never depends on
// them, since the log fences every write it makes as owner. Config.Cluster
// nil: one node, which is the only broker, the controller and every
// partition's leader.
type ClusterView interface {
	// Brokers returns the live brokers.
	Brokers() []Broker
	// Controller returns the controller's node id, -1 when there is none yet.
	Controller() int32
	// Leader returns a partition's owner and its owner (leader) epoch; ok
	// is false when no broker owns it now.
	Leader(id metadata.TopicID, p int32) (node, epoch int32, ok bool)
	// Coordinator returns the broker coordinating a FindCoordinator key
	// (keyType 0: a group, 1: a transactional id, each coordinated by the
	// owner of its shard, metadata.GroupShard); ok is false when none does
	// yet.
	Coordinator(keyType int8, key string) (node int32, ok bool)
}

// Broker is one live broker as clients are told to reach it.
type Broker struct {
	NodeID int32
	Host   string
	Port   int32
	Rack   string // empty: none
}

// clusterState is one request's picture of the cluster, read once so that
// every part of an answer agrees on the live brokers.
type clusterState struct {
	self       int32
	view       ClusterView // nil: one node
	brokers    []Broker    // by node id
	controller int32       // -1: none, or not alive
}

// cluster reads the view, or describes this one node.
func (s *Server) cluster() clusterState {
	c := clusterState{self: s.cfg.NodeID, view: s.cfg.Cluster, controller: s.cfg.NodeID}
	if c.view == nil {
		c.brokers = []Broker{{NodeID: s.cfg.NodeID, Host: s.cfg.AdvertiseHost, Port: s.cfg.AdvertisePort}}
		return c
	}
	c.brokers = slices.Clone(c.view.Brokers())
	slices.SortFunc(c.brokers, func(a, b Broker) int { return int(a.NodeID) - int(b.NodeID) })
	c.controller = c.view.Controller()
	if _, ok := c.broker(c.controller); !ok {
		c.controller = -1
	}
	return c
}

// broker returns a live broker by node id.
func (c clusterState) broker(node int32) (Broker, bool) {
	i, ok := slices.BinarySearchFunc(c.brokers, node, func(b Broker, n int32) int { return int(b.NodeID) - int(n) })
	if !ok {
		return Broker{}, false
	}
	return c.brokers[i], true
}

// leader returns a partition's leader and leader epoch. ok is false when
// no live broker owns it: a leader the view names but whose broker is not
// alive (its registration went before its ownership) is no leader, as
// Kafka answers a leader that is not alive.
func (c clusterState) leader(t *partition.Topic, p *partition.Partition) (node, epoch int32, ok bool) {
	if c.view == nil {
		return c.self, p.LeaderEpoch(), true
	}
	node, epoch, ok = c.view.Leader(t.ID, p.Index())
	if !ok {
		return -1, -1, false
	}
	if _, alive := c.broker(node); !alive {
		return -1, -1, false
	}
	return node, epoch, true
}

// rackPtr is a broker's rack as the wire carries it: null when it has none.
func rackPtr(rack string) *string {
	if rack == "" {
		return nil
	}
	return &rack
}

// notLeaderCode says whether this broker may answer for partition p of t
// as its leader: 0 when it may (always on one node); otherwise the code a
// Kafka broker that is not the leader gives. As Kafka's
// Partition.getLocalLog, a leader epoch the client sends (asked >= 0) is
// checked first, against the leader's epoch: an older one is
// FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH; then the answer is
// NOT_LEADER_OR_FOLLOWER. Only the view's word is checked here: the log
// refuses (partition.ErrNotLeader) what it does not own, whatever the view
// says.
func (s *Server) notLeaderCode(t *partition.Topic, p int32, asked int32) int16 {
	if s.cfg.Cluster == nil {
		return 0
	}
	node, epoch, ok := s.cfg.Cluster.Leader(t.ID, p)
	if ok && node == s.cfg.NodeID {
		return 0
	}
	if ok && asked >= 0 {
		if code := leaderEpochCode(epoch, asked); code != 0 {
			return code
		}
	}
	return kerr.NotLeaderForPartition.Code
}

// currentLeader is a partition's leader as KIP-951 hints give it: ids of
// -1 when there is no live leader, and then no endpoint.
type currentLeader struct {
	node, epoch int32
	endpoint    *Broker
}

// currentLeaderOf returns the leader of partition p of t for a hint.
func (c clusterState) currentLeaderOf(t *partition.Topic, p int32) currentLeader {
	part := t.Partition(p)
	if part == nil {
		return currentLeader{node: -1, epoch: -1}
	}
	node, epoch, ok := c.leader(t, part)
	if !ok {
		return currentLeader{node: -1, epoch: -1}
	}
	b, _ := c.broker(node)
	return currentLeader{node: node, epoch: epoch, endpoint: &b}
}

// hinted says whether an error code is one whose answer carries the
// current leader (KIP-951), as Kafka's KafkaApis gives it.
func hinted(code int16) bool {
	return code == kerr.NotLeaderForPartition.Code || code == kerr.FencedLeaderEpoch.Code
}
