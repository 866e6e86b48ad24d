package protocol

import (
	"sync"
	"testing"

	"github.com/sediment-io/sediment/metadata"
)

// fakeView is a ClusterView the test sets by hand; several servers may
// share one, as the brokers of a cluster share etcd.
type fakeView struct {
	mu           sync.Mutex
	brokers      []Broker
	controller   int32
	leaders      map[fakePartition]fakeLeader
	coordinators map[string]int32 // group id -> node
}

type fakePartition struct {
	id metadata.TopicID
	p  int32
}

type fakeLeader struct{ node, epoch int32 }

func newFakeView() *fakeView {
	return &fakeView{controller: -1, leaders: map[fakePartition]fakeLeader{}, coordinators: map[string]int32{}}
}

func (v *fakeView) Brokers() []Broker {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]Broker(nil), v.brokers...)
}

func (v *fakeView) Controller() int32 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.controller
}

func (v *fakeView) Leader(id metadata.TopicID, p int32) (node, epoch int32, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	l, ok := v.leaders[fakePartition{id, p}]
	return l.node, l.epoch, ok
}

func (v *fakeView) Coordinator(keyType int8, key string) (int32, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if keyType != coordinatorGroup && keyType != coordinatorTransaction {
		return 0, false
	}
	n, ok := v.coordinators[key]
	return n, ok
}

// addBroker adds a live broker.
func (v *fakeView) addBroker(b Broker) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.brokers = append(v.brokers, b)
}

// setLeader makes node the partition's owner at epoch; node < 0: no owner.
func (v *fakeView) setLeader(id metadata.TopicID, p, node, epoch int32) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if node < 0 {
		delete(v.leaders, fakePartition{id, p})
		return
	}
	v.leaders[fakePartition{id, p}] = fakeLeader{node, epoch}
}

func (v *fakeView) setController(node int32) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.controller = node
}

// withCluster makes the broker node id answer from view.
func withCluster(node int32, view ClusterView) brokerOpt {
	return func(s *brokerSetup) { s.cfg.NodeID, s.cfg.Cluster = node, view }
}

// selfBroker is b as a view lists it.
func selfBroker(b *testBroker, rack string) Broker {
	return Broker{NodeID: b.srv.cfg.NodeID, Host: b.srv.cfg.AdvertiseHost, Port: b.srv.cfg.AdvertisePort, Rack: rack}
}

// Partition ownership of the cluster tests' topic "owned": p0 here (node 0),
// p1 on node 1 (alive), p2 owned by nobody, p3 on node 7 (not alive).
var ownedID = metadata.TopicID{0x0d, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}

const (
	otherPort  = 19092
	otherRack  = "rack-b"
	selfRack   = "rack-a"
	selfEpoch  = 3
	otherEpoch = 5
)

// startClusterBroker starts node 0 of a fake two-broker cluster and
// returns it with its view.
func startClusterBroker(t *testing.T) (*testBroker, *fakeView) {
	t.Helper()
	view := newFakeView()
	b := startBroker(t, withCluster(0, view), withTopic("owned", ownedID, 4))
	view.addBroker(selfBroker(b, selfRack))
	view.addBroker(Broker{NodeID: 1, Host: "127.0.0.2", Port: otherPort, Rack: otherRack})
	view.setController(1)
	view.setLeader(ownedID, 0, 0, selfEpoch)
	view.setLeader(ownedID, 1, 1, otherEpoch)
	view.setLeader(ownedID, 3, 7, 2)
	return b, view
}
