package protocol

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/groupcoord"
	"github.com/sediment-io/sediment/storage/partition"
)

// TestClusterErrorCodes: the log's and the coordinator's "not the owner"
// errors reach the client as the codes that send it elsewhere.
func TestClusterErrorCodes(t *testing.T) {
	t.Parallel()
	wantCode(t, "ErrNotLeader", errorCode(fmt.Errorf("append: %w", partition.ErrNotLeader)), kerr.NotLeaderForPartition.Code)
	wantCode(t, "ErrNotCoordinator", errorCode(fmt.Errorf("join: %w", groupcoord.ErrNotCoordinator)), kerr.NotCoordinator.Code)
}

// TestClusterProduceNotLeader: Produce v3–v13 to a partition another broker
// owns, or nobody does, is NOT_LEADER_OR_FOLLOWER and appends nothing; from
// v10 the answer names the current leader and its endpoint (KIP-951).
// The partition this broker owns takes the batch.
func TestClusterProduceNotLeader(t *testing.T) {
	t.Parallel()
	b, _ := startClusterBroker(t)
	c := b.dial()
	batch := plainBatch(1, 8, 1).build(t)
	for v := int16(3); v <= 13; v++ {
		for p := int32(0); p < 3; p++ {
			req := produceReq(v, -1, "owned", p, batch)
			req.Topics[0].TopicID = ownedID
			resp := roundTrip[*kmsg.ProduceResponse](c, req)
			sp := resp.Topics[0].Partitions[0]
			what := fmt.Sprintf("v%d p%d", v, p)
			if p == 0 {
				wantCode(t, what, sp.ErrorCode, 0)
				continue
			}
			wantCode(t, what, sp.ErrorCode, kerr.NotLeaderForPartition.Code)
			checkProduceHint(t, what, v, resp, sp, p)
		}
	}
	topic, ok := b.log.TopicByID(ownedID)
	if !ok {
		t.Fatal("topic owned is gone")
	}
	if _, hw := topic.Partition(1).Offsets(); hw != 0 {
		t.Errorf("partition 1 took records: high watermark %d", hw)
	}
}

func checkProduceHint(t *testing.T, what string, v int16, resp *kmsg.ProduceResponse, sp kmsg.ProduceResponseTopicPartition, p int32) {
	t.Helper()
	cur := sp.CurrentLeader
	switch {
	case v < 10:
		if cur.LeaderID != -1 || len(resp.Brokers) != 0 {
			t.Errorf("%s: hint %+v brokers %+v before v10", what, cur, resp.Brokers)
		}
	case p == 1:
		if cur.LeaderID != 1 || cur.LeaderEpoch != otherEpoch {
			t.Errorf("%s: current leader %+v, want 1 at %d", what, cur, otherEpoch)
		}
		if len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != 1 || resp.Brokers[0].Port != otherPort ||
			resp.Brokers[0].Rack == nil || *resp.Brokers[0].Rack != otherRack {
			t.Errorf("%s: endpoints %+v", what, resp.Brokers)
		}
	default: // nobody owns it: no leader to name
		if cur.LeaderID != -1 || cur.LeaderEpoch != -1 || len(resp.Brokers) != 0 {
			t.Errorf("%s: hint %+v brokers %+v for an unowned partition", what, cur, resp.Brokers)
		}
	}
}

// TestClusterFetchNotLeader: Fetch v4–v18 of a partition another broker
// owns is NOT_LEADER_OR_FOLLOWER, or a leader-epoch error when the client
// sends an epoch other than the owner's; from v16 with the current leader
// and its endpoint. From v11 a consumer's fetch with no epoch error is
// served instead, as a follower serves it (KIP-392; fetch_replica_test.go
// reads a partition not owned here); a follower's fetch never is.
func TestClusterFetchNotLeader(t *testing.T) {
	t.Parallel()
	b, _ := startClusterBroker(t)
	c := b.dial()
	cases := []struct {
		epoch int32
		code  int16
	}{
		{-1, kerr.NotLeaderForPartition.Code},
		{otherEpoch, kerr.NotLeaderForPartition.Code},
		{otherEpoch - 1, kerr.FencedLeaderEpoch.Code},
		{otherEpoch + 1, kerr.UnknownLeaderEpoch.Code},
	}
	for v := int16(4); v <= 18; v++ {
		for _, tc := range cases {
			if tc.epoch >= 0 && v < 9 { // CurrentLeaderEpoch came with v9
				continue
			}
			what := fmt.Sprintf("v%d epoch %d", v, tc.epoch)
			req := fetchReq(v, "owned", ownedID, 1, 0)
			req.Topics[0].Partitions[0].CurrentLeaderEpoch = tc.epoch
			if v >= 11 && tc.code == kerr.NotLeaderForPartition.Code {
				sp := c.fetchOne(req)
				wantCode(t, what+" (consumer)", sp.ErrorCode, 0)
				if sp.CurrentLeader.LeaderID != -1 {
					t.Errorf("%s: served with a leader hint %+v", what, sp.CurrentLeader)
				}
				req.ReplicaID, req.ReplicaState.ID = 1, 1 // a follower
			}
			resp := roundTrip[*kmsg.FetchResponse](c, req)
			sp := resp.Topics[0].Partitions[0]
			wantCode(t, what, sp.ErrorCode, tc.code)
			if sp.HighWatermark != -1 || len(sp.RecordBatches) != 0 {
				t.Errorf("%s: high watermark %d, %d record bytes", what, sp.HighWatermark, len(sp.RecordBatches))
			}
			hinted := v >= 16 && tc.code != kerr.UnknownLeaderEpoch.Code
			if got := sp.CurrentLeader.LeaderID == 1 && sp.CurrentLeader.LeaderEpoch == otherEpoch; got != hinted {
				t.Errorf("%s: current leader %+v, hinted %v", what, sp.CurrentLeader, hinted)
			}
			if got := len(resp.Brokers) == 1 && resp.Brokers[0].NodeID == 1 && resp.Brokers[0].Port == otherPort; got != hinted {
				t.Errorf("%s: endpoints %+v, hinted %v", what, resp.Brokers, hinted)
			}
		}
	}
	// The partition this broker owns is served.
	sp := c.fetchOne(fetchReq(18, "owned", ownedID, 0, 0))
	wantCode(t, "owned partition", sp.ErrorCode, 0)
}

// TestClusterOffsetsNotLeader: ListOffsets, OffsetForLeaderEpoch and
// DeleteRecords of a partition another broker owns are
// NOT_LEADER_OR_FOLLOWER, and answered for the owned one.
func TestClusterOffsetsNotLeader(t *testing.T) {
	t.Parallel()
	b, _ := startClusterBroker(t)
	c := b.dial()
	for p := int32(0); p < 4; p++ {
		want := int16(kerr.NotLeaderForPartition.Code)
		if p == 0 {
			want = 0
		}
		what := fmt.Sprintf("partition %d", p)

		lo := kmsg.NewPtrListOffsetsRequest()
		lo.Version, lo.ReplicaID = 9, -1
		lt := kmsg.NewListOffsetsRequestTopic()
		lt.Topic = "owned"
		lp := kmsg.NewListOffsetsRequestTopicPartition()
		lp.Partition, lp.Timestamp = p, -1
		lt.Partitions = append(lt.Partitions, lp)
		lo.Topics = append(lo.Topics, lt)
		lresp := roundTrip[*kmsg.ListOffsetsResponse](c, lo)
		wantCode(t, "ListOffsets "+what, lresp.Topics[0].Partitions[0].ErrorCode, want)

		oe := kmsg.NewPtrOffsetForLeaderEpochRequest()
		oe.Version, oe.ReplicaID = 4, -1
		ot := kmsg.NewOffsetForLeaderEpochRequestTopic()
		ot.Topic = "owned"
		op := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		op.Partition, op.CurrentLeaderEpoch, op.LeaderEpoch = p, -1, 0
		ot.Partitions = append(ot.Partitions, op)
		oe.Topics = append(oe.Topics, ot)
		oresp := roundTrip[*kmsg.OffsetForLeaderEpochResponse](c, oe)
		wantCode(t, "OffsetForLeaderEpoch "+what, oresp.Topics[0].Partitions[0].ErrorCode, want)

		dr := kmsg.NewPtrDeleteRecordsRequest()
		dr.Version, dr.TimeoutMillis = 2, 30000
		dt := kmsg.NewDeleteRecordsRequestTopic()
		dt.Topic = "owned"
		dp := kmsg.NewDeleteRecordsRequestTopicPartition()
		dp.Partition, dp.Offset = p, -1
		dt.Partitions = append(dt.Partitions, dp)
		dr.Topics = append(dr.Topics, dt)
		dresp := roundTrip[*kmsg.DeleteRecordsResponse](c, dr)
		wantCode(t, "DeleteRecords "+what, dresp.Topics[0].Partitions[0].ErrorCode, want)
	}
}

// TestClusterGroupsNotCoordinator: every group API answers
// NOT_COORDINATOR once the coordinator no longer coordinates the group (here
// closed, as a broker whose shard moved away is), so that the client looks
// the coordinator up again.
func TestClusterGroupsNotCoordinator(t *testing.T) {
	t.Parallel()
	b := startGroupBroker(t)
	b.createTopic("t", 1, nil)
	c := b.dial()
	m := joinAlone(t, c, "g", nil, "t")
	if err := b.srv.groups.Close(); err != nil {
		t.Fatal(err)
	}
	want := int16(kerr.NotCoordinator.Code)
	wantCode(t, "JoinGroup", roundTrip[*kmsg.JoinGroupResponse](c, joinReq(9, "g", m.id, nil, "t")).ErrorCode, want)
	wantCode(t, "SyncGroup", roundTrip[*kmsg.SyncGroupResponse](c, syncReq(5, "g", m.id, nil, m.gen, nil)).ErrorCode, want)
	wantCode(t, "Heartbeat", roundTrip[*kmsg.HeartbeatResponse](c, heartbeatReq("g", m.id, nil, m.gen)).ErrorCode, want)
	commit := roundTrip[*kmsg.OffsetCommitResponse](c, commitReq(8, "g", m.id, m.gen, "t", 1, 0))
	wantCode(t, "OffsetCommit", commitCodes(commit)[0], want)

	fetch := kmsg.NewPtrOffsetFetchRequest()
	fetch.Version, fetch.Group = 7, "g"
	wantCode(t, "OffsetFetch", roundTrip[*kmsg.OffsetFetchResponse](c, fetch).ErrorCode, want)

	describe := kmsg.NewPtrDescribeGroupsRequest()
	describe.Version, describe.Groups = 5, []string{"g"}
	wantCode(t, "DescribeGroups", roundTrip[*kmsg.DescribeGroupsResponse](c, describe).Groups[0].ErrorCode, want)

	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Version, del.Groups = 2, []string{"g"}
	wantCode(t, "DeleteGroups", roundTrip[*kmsg.DeleteGroupsResponse](c, del).Groups[0].ErrorCode, want)

	wantCode(t, "OffsetDelete", roundTrip[*kmsg.OffsetDeleteResponse](c, offsetDeleteReq("g", map[string]int32{"t": 0})).ErrorCode, want)

	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version, leave.Group, leave.MemberID = 0, "g", m.id
	wantCode(t, "LeaveGroup", roundTrip[*kmsg.LeaveGroupResponse](c, leave).ErrorCode, want)
}

// TestClusterTxnPartitionsNotLeader: WriteTxnMarkers and DescribeProducers
// of a partition another broker owns, or nobody does, are
// NOT_LEADER_OR_FOLLOWER (the coordinator retries its markers at the
// owner); the owned partition takes its marker.
func TestClusterTxnPartitionsNotLeader(t *testing.T) {
	t.Parallel()
	b, _ := startClusterBroker(t)
	c := b.dial()
	markers := kmsg.NewPtrWriteTxnMarkersRequest()
	markers.Markers = []kmsg.WriteTxnMarkersRequestMarker{{ProducerID: 5, ProducerEpoch: 0, Committed: false,
		Topics: []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: "owned", Partitions: []int32{0, 1, 2}}}}}
	got := roundTrip[*kmsg.WriteTxnMarkersResponse](c, markers).Markers[0].Topics[0].Partitions
	producers := kmsg.NewPtrDescribeProducersRequest()
	producers.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: "owned", Partitions: []int32{0, 1, 2}}}
	described := roundTrip[*kmsg.DescribeProducersResponse](c, producers).Topics[0].Partitions
	for p := range 3 {
		want := int16(0)
		if p > 0 {
			want = kerr.NotLeaderForPartition.Code
		}
		wantCode(t, fmt.Sprintf("marker p%d", p), got[p].ErrorCode, want)
		wantCode(t, fmt.Sprintf("producers p%d", p), described[p].ErrorCode, want)
	}
}
