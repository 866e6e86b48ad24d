package protocol

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestClusterMetadata checks Metadata v0–v13 against a view: the live
// brokers with their racks, the controller, each partition's owner and
// epoch, and LEADER_NOT_AVAILABLE for a partition no live broker owns.
func TestClusterMetadata(t *testing.T) {
	t.Parallel()
	b, _ := startClusterBroker(t)
	c := b.dial()
	for v := int16(0); v <= 13; v++ {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = v
		if v == 0 {
			req.Topics = []kmsg.MetadataRequestTopic{} // v0: empty means all
		}
		resp := roundTrip[*kmsg.MetadataResponse](c, req)
		checkClusterBrokers(t, v, b, resp.Brokers)
		if v >= 1 && resp.ControllerID != 1 {
			t.Errorf("v%d: controller %d, want 1", v, resp.ControllerID)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 4 {
			t.Fatalf("v%d: topics %+v", v, resp.Topics)
		}
		parts := resp.Topics[0].Partitions
		slices.SortFunc(parts, func(a, b kmsg.MetadataResponseTopicPartition) int { return int(a.Partition - b.Partition) })
		checkOwned(t, v, parts[0], 0, selfEpoch)
		checkOwned(t, v, parts[1], 1, otherEpoch)
		checkUnowned(t, v, parts[2])
		checkUnowned(t, v, parts[3]) // its owner is not alive
	}
}

func checkClusterBrokers(t *testing.T, v int16, b *testBroker, got []kmsg.MetadataResponseBroker) {
	t.Helper()
	slices.SortFunc(got, func(a, b kmsg.MetadataResponseBroker) int { return int(a.NodeID - b.NodeID) })
	if len(got) != 2 || got[0].NodeID != 0 || got[1].NodeID != 1 {
		t.Fatalf("v%d: brokers %+v", v, got)
	}
	if got[0].Port != b.srv.cfg.AdvertisePort || got[1].Host != "127.0.0.2" || got[1].Port != otherPort {
		t.Errorf("v%d: endpoints %+v", v, got)
	}
	rack := func(r *string) string {
		if r == nil {
			return "<nil>"
		}
		return *r
	}
	wantSelf, wantOther := selfRack, otherRack
	if v == 0 { // racks came with v1
		wantSelf, wantOther = "<nil>", "<nil>"
	}
	if rack(got[0].Rack) != wantSelf || rack(got[1].Rack) != wantOther {
		t.Errorf("v%d: racks %s %s", v, rack(got[0].Rack), rack(got[1].Rack))
	}
}

func checkOwned(t *testing.T, v int16, p kmsg.MetadataResponseTopicPartition, node, epoch int32) {
	t.Helper()
	wantCode(t, "owned partition", p.ErrorCode, 0)
	if p.Leader != node || !slices.Equal(p.Replicas, []int32{node}) || !slices.Equal(p.ISR, []int32{node}) || len(p.OfflineReplicas) != 0 {
		t.Errorf("v%d: partition %d: %+v, want leader %d", v, p.Partition, p, node)
	}
	if v >= 7 && p.LeaderEpoch != epoch {
		t.Errorf("v%d: partition %d: leader epoch %d, want %d", v, p.Partition, p.LeaderEpoch, epoch)
	}
}

func checkUnowned(t *testing.T, v int16, p kmsg.MetadataResponseTopicPartition) {
	t.Helper()
	wantCode(t, "unowned partition", p.ErrorCode, kerr.LeaderNotAvailable.Code)
	if p.Leader != -1 || len(p.Replicas) != 0 || len(p.ISR) != 0 {
		t.Errorf("v%d: partition %d: %+v, want leader -1 and no replicas", v, p.Partition, p)
	}
}

// TestClusterControllerNotAlive: a controller the view names but whose
// broker is gone is no controller (-1), as Kafka answers while none is
// known.
func TestClusterControllerNotAlive(t *testing.T) {
	t.Parallel()
	b, view := startClusterBroker(t)
	view.setController(9)
	c := b.dial()
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	if resp := roundTrip[*kmsg.MetadataResponse](c, req); resp.ControllerID != -1 {
		t.Errorf("metadata controller %d, want -1", resp.ControllerID)
	}
	dreq := kmsg.NewPtrDescribeClusterRequest()
	dreq.Version, dreq.EndpointType = 1, 1
	if resp := roundTrip[*kmsg.DescribeClusterResponse](c, dreq); resp.ControllerID != -1 {
		t.Errorf("describe cluster controller %d, want -1", resp.ControllerID)
	}
}

// TestClusterDescribeCluster checks DescribeCluster v0–v2 against a view.
func TestClusterDescribeCluster(t *testing.T) {
	t.Parallel()
	b, _ := startClusterBroker(t)
	c := b.dial()
	for v := int16(0); v <= 2; v++ {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.Version, req.EndpointType = v, 1
		resp := roundTrip[*kmsg.DescribeClusterResponse](c, req)
		wantCode(t, "DescribeCluster", resp.ErrorCode, 0)
		if resp.ControllerID != 1 || len(resp.Brokers) != 2 {
			t.Fatalf("v%d: controller %d brokers %+v", v, resp.ControllerID, resp.Brokers)
		}
		br := resp.Brokers
		slices.SortFunc(br, func(a, b kmsg.DescribeClusterResponseBroker) int { return int(a.NodeID - b.NodeID) })
		if br[0].NodeID != 0 || br[0].Port != b.srv.cfg.AdvertisePort || br[0].Rack == nil || *br[0].Rack != selfRack {
			t.Errorf("v%d: broker 0 %+v", v, br[0])
		}
		if br[1].NodeID != 1 || br[1].Host != "127.0.0.2" || br[1].Port != otherPort || br[1].Rack == nil || *br[1].Rack != otherRack {
			t.Errorf("v%d: broker 1 %+v", v, br[1])
		}
	}
}

// TestClusterDescribeTopicPartitions: leaders and epochs from the view, as
// in Metadata.
func TestClusterDescribeTopicPartitions(t *testing.T) {
	t.Parallel()
	b, _ := startClusterBroker(t)
	c := b.dial()
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	req.ResponsePartitionLimit = 100
	rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
	rt.Topic = "owned"
	req.Topics = append(req.Topics, rt)
	resp := roundTrip[*kmsg.DescribeTopicPartitionsResponse](c, req)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 4 {
		t.Fatalf("topics %+v", resp.Topics)
	}
	want := []struct {
		code          int16
		leader, epoch int32
	}{
		{0, 0, selfEpoch},
		{0, 1, otherEpoch},
		{kerr.LeaderNotAvailable.Code, -1, -1},
		{kerr.LeaderNotAvailable.Code, -1, -1},
	}
	for i, p := range resp.Topics[0].Partitions {
		w := want[i]
		wantCode(t, "partition", p.ErrorCode, w.code)
		if p.LeaderID != w.leader || (w.code == 0 && p.LeaderEpoch != w.epoch) {
			t.Errorf("partition %d: leader %d epoch %d, want %d at %d", i, p.LeaderID, p.LeaderEpoch, w.leader, w.epoch)
		}
		replicas := []int32{}
		if w.leader >= 0 {
			replicas = []int32{w.leader}
		}
		if !slices.Equal(p.Replicas, replicas) || !slices.Equal(p.ISR, replicas) {
			t.Errorf("partition %d: replicas %v isr %v, want %v", i, p.Replicas, p.ISR, replicas)
		}
	}
}

// TestClusterFindCoordinator: a group's or a transactional id's coordinator
// is the live broker the view names, and COORDINATOR_NOT_AVAILABLE while
// none (or a dead one) is.
func TestClusterFindCoordinator(t *testing.T) {
	t.Parallel()
	b, view := startClusterBroker(t)
	view.mu.Lock()
	view.coordinators["here"], view.coordinators["there"], view.coordinators["dead"] = 0, 1, 9
	view.mu.Unlock()
	want := map[string]struct {
		code int16
		node int32
		port int32
	}{
		"here":    {0, 0, b.srv.cfg.AdvertisePort},
		"there":   {0, 1, otherPort},
		"dead":    {kerr.CoordinatorNotAvailable.Code, -1, -1},
		"nowhere": {kerr.CoordinatorNotAvailable.Code, -1, -1},
	}
	c := b.dial()
	for v := int16(0); v <= 6; v++ {
		for key, w := range want {
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.Version, req.CoordinatorKey, req.CoordinatorKeys = v, key, []string{key}
			req.CoordinatorType = int8(v % 2) // groups and transactional ids alike
			resp := roundTrip[*kmsg.FindCoordinatorResponse](c, req)
			got := kmsg.FindCoordinatorResponseCoordinator{ErrorCode: resp.ErrorCode, NodeID: resp.NodeID, Port: resp.Port}
			if v >= 4 {
				if len(resp.Coordinators) != 1 || resp.Coordinators[0].Key != key {
					t.Fatalf("v%d %s: coordinators %+v", v, key, resp.Coordinators)
				}
				got = resp.Coordinators[0]
			}
			wantCode(t, "FindCoordinator "+key, got.ErrorCode, w.code)
			if got.NodeID != w.node || got.Port != w.port {
				t.Errorf("v%d %s: node %d port %d, want %d %d", v, key, got.NodeID, got.Port, w.node, w.port)
			}
		}
	}
}
