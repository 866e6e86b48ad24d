package protocol

// DeleteRecords v0–v2 (KIP-107): move each partition's log start offset up
// to the given offset (-1: the high watermark) and answer the new low
// watermark. Records below it are unreadable at once; whole segments below
// it leave the object store at the next retention pass. An offset above the
// high watermark is OFFSET_OUT_OF_RANGE; a lower offset than the current log
// start changes nothing. In a cluster only the partition's owner moves it:
// elsewhere the answer is NOT_LEADER_OR_FOLLOWER.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/storage/partition"
)

func init() { register(kmsg.DeleteRecords, 0, 2, handleDeleteRecords) }

func handleDeleteRecords(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.DeleteRecordsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	timeout := time.Duration(req.TimeoutMillis) * time.Millisecond
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(r.ctx(), timeout)
	defer cancel()
	for _, rt := range req.Topics {
		st := kmsg.NewDeleteRecordsResponseTopic()
		st.Topic = rt.Topic
		t, _ := r.s.log.Topic(rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewDeleteRecordsResponseTopicPartition()
			sp.Partition, sp.LowWatermark = rp.Partition, -1
			var p *partition.Partition
			if t != nil {
				p = t.Partition(rp.Partition)
			}
			if p == nil {
				sp.ErrorCode = r.code(kerr.UnknownTopicOrPartition.Code)
			} else if code := r.s.notLeaderCode(t, rp.Partition, -1); code != 0 {
				sp.ErrorCode = r.code(code)
			} else if low, err := r.s.log.DeleteRecords(ctx, p, rp.Offset); err != nil {
				sp.ErrorCode = r.codeOf(err)
			} else {
				sp.LowWatermark = low
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}
