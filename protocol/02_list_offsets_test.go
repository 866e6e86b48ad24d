package protocol

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// listOffsetsReq asks for timestamps[i] in partition i of topic.
func listOffsetsReq(version int16, topic string, timestamps []int64) *kmsg.ListOffsetsRequest {
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version, req.ReplicaID = version, -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for i, ts := range timestamps {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = int32(i), ts, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// withRecordTimestamps makes a batch whose records carry the given
// timestamps.
func withRecordTimestamps(codec int8, ts ...int64) batchSpec {
	s := plainBatch(len(ts), 30, 0)
	for i := range s.records {
		s.records[i].ts = ts[i]
	}
	s.codec = codec
	return s
}

func TestListOffsets(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("times", 1, nil)
	b.createTopic("empty", 1, nil)
	c := b.dial()
	// offsets 0-2: 1000..1002 plain; 3-5: 2000, 2005, 2003 gzip; 6: 1500;
	// 7-8: 3000, 2999 zstd.
	c.mustProduce("times", 0, withRecordTimestamps(0, 1000, 1001, 1002).build(t))
	c.mustProduce("times", 0, withRecordTimestamps(1, 2000, 2005, 2003).build(t))
	c.mustProduce("times", 0, withRecordTimestamps(0, 1500).build(t))
	c.mustProduce("times", 0, withRecordTimestamps(4, 3000, 2999).build(t))
	cases := []struct {
		name       string
		topic      string
		ts         int64
		minVersion int16
		offset     int64
		timestamp  int64
	}{
		{"latest", "times", -1, 1, 9, -1},
		{"earliest", "times", -2, 1, 0, -1},
		{"max timestamp", "times", -3, 7, 7, 3000},
		{"earliest local", "times", -4, 8, 0, -1},
		{"exact first", "times", 1000, 1, 0, 1000},
		{"exact inside a batch", "times", 1001, 1, 1, 1001},
		{"between batches", "times", 1003, 1, 3, 2000},
		{"inside a gzip batch", "times", 2004, 1, 4, 2005},
		{"earlier timestamp later in the log", "times", 1500, 1, 3, 2000},
		{"inside a zstd batch", "times", 2006, 1, 7, 3000},
		{"before everything", "times", 0, 1, 0, 1000},
		{"after everything", "times", 3001, 1, -1, -1},
		{"empty latest", "empty", -1, 1, 0, -1},
		{"empty earliest", "empty", -2, 1, 0, -1},
		{"empty max timestamp", "empty", -3, 7, -1, -1},
		{"empty by time", "empty", 5, 1, -1, -1},
	}
	for _, tc := range cases {
		for _, v := range []int16{tc.minVersion, 11} {
			resp := roundTrip[*kmsg.ListOffsetsResponse](c, listOffsetsReq(v, tc.topic, []int64{tc.ts}))
			p := resp.Topics[0].Partitions[0]
			wantCode(t, tc.name, p.ErrorCode, 0)
			if p.Offset != tc.offset || p.Timestamp != tc.timestamp {
				t.Errorf("%s v%d: offset %d timestamp %d, want %d %d", tc.name, v, p.Offset, p.Timestamp, tc.offset, tc.timestamp)
			}
			wantEpoch := int32(0) // every batch was appended in epoch 0
			if tc.offset == -1 {
				wantEpoch = -1 // no offset found: no epoch, as in Kafka
			}
			if v >= 4 && p.LeaderEpoch != wantEpoch {
				t.Errorf("%s v%d: leader epoch %d, want %d", tc.name, v, p.LeaderEpoch, wantEpoch)
			}
		}
	}
}

func TestListOffsetsErrors(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("one", 1, nil)
	c := b.dial()
	resp := roundTrip[*kmsg.ListOffsetsResponse](c, listOffsetsReq(5, "one", []int64{-1, -1}))
	wantCode(t, "partition 0", resp.Topics[0].Partitions[0].ErrorCode, 0)
	wantCode(t, "partition 1", resp.Topics[0].Partitions[1].ErrorCode, kerr.UnknownTopicOrPartition.Code)
	resp = roundTrip[*kmsg.ListOffsetsResponse](c, listOffsetsReq(5, "none", []int64{-1}))
	wantCode(t, "unknown topic", resp.Topics[0].Partitions[0].ErrorCode, kerr.UnknownTopicOrPartition.Code)
	req := listOffsetsReq(9, "one", []int64{-1})
	req.Topics[0].Partitions[0].CurrentLeaderEpoch = 3
	resp = roundTrip[*kmsg.ListOffsetsResponse](c, req)
	wantCode(t, "future leader epoch", resp.Topics[0].Partitions[0].ErrorCode, kerr.UnknownLeaderEpoch.Code)
}
