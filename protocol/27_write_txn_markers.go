package protocol

// WriteTxnMarkers v0–v1. A transaction coordinator (another broker's, or an
// operator aborting a hanging transaction, as Kafka's
// `kafka-transactions.sh abort` does) asks the owner of each partition to
// write a commit or abort control batch for a producer. Each marker's
// partitions are written concurrently, each answered once its marker is
// durable (like an acks=all produce): UNKNOWN_TOPIC_OR_PARTITION for a
// partition that does not exist, NOT_LEADER_OR_FOLLOWER for one this broker
// does not own (the coordinator retries at the new owner), and the log's
// refusals (INVALID_PRODUCER_EPOCH for a marker older than the producer's
// epoch, TRANSACTION_COORDINATOR_FENCED for an older coordinator epoch).
// Partition N of "__consumer_offsets" names the consumer groups of
// coordinator shard N: their pending transactional offsets are committed
// or dropped, and a broker not coordinating the shard answers
// NOT_LEADER_OR_FOLLOWER, as Kafka translates its group coordinator's
// NOT_COORDINATOR for this API. The answer waits on the writer
// (request.wait). v2 (the marker's transaction version, KIP-1228) is not
// served.

import (
	"context"
	"errors"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/groupcoord"
	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/partition"
)

func init() { register(kmsg.WriteTxnMarkers, 0, 1, handleWriteTxnMarkers) }

// groupOffsetsTopic is the topic whose partition N stands, in
// WriteTxnMarkers and AddPartitionsToTxn, for group coordinator shard N.
const groupOffsetsTopic = "__consumer_offsets"

// markerWriters bounds the markers one request writes at once.
const markerWriters = 32

func handleWriteTxnMarkers(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.WriteTxnMarkersRequest)
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	r.wait = func() { r.writeTxnMarkers(req, resp) }
	return resp, nil
}

func (r *request) writeTxnMarkers(req *kmsg.WriteTxnMarkersRequest, resp *kmsg.WriteTxnMarkersResponse) {
	var wg sync.WaitGroup
	slots := make(chan struct{}, markerWriters)
	resp.Markers = make([]kmsg.WriteTxnMarkersResponseMarker, len(req.Markers))
	for i, m := range req.Markers {
		rm := &resp.Markers[i]
		*rm = kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		rm.Topics = make([]kmsg.WriteTxnMarkersResponseMarkerTopic, len(m.Topics))
		for j, t := range m.Topics {
			rt := &rm.Topics[j]
			*rt = kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			rt.Partitions = make([]kmsg.WriteTxnMarkersResponseMarkerTopicPartition, len(t.Partitions))
			for k, p := range t.Partitions {
				rp := &rt.Partitions[k]
				*rp = kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = p
				wg.Add(1)
				slots <- struct{}{}
				go func() {
					defer wg.Done()
					defer func() { <-slots }()
					rp.ErrorCode = r.writeMarker(m, t.Topic, p)
				}()
			}
		}
	}
	wg.Wait()
	for _, rm := range resp.Markers {
		for _, rt := range rm.Topics {
			for _, rp := range rt.Partitions {
				r.code(rp.ErrorCode)
			}
		}
	}
}

// writeMarker writes one marker into one partition, or completes one group
// shard's pending offsets, and returns the partition's code.
func (r *request) writeMarker(m kmsg.WriteTxnMarkersRequestMarker, topic string, p int32) int16 {
	ctx := r.ctx()
	if topic == groupOffsetsTopic {
		return r.completeGroupTxn(ctx, m, p)
	}
	t, ok := r.s.log.Topic(topic)
	if !ok || t.Partition(p) == nil {
		return kerr.UnknownTopicOrPartition.Code
	}
	if code := r.s.notLeaderCode(t, p, -1); code != 0 {
		return code
	}
	_, err := r.s.log.WriteMarker(ctx, t.Partition(p), partition.Marker{ProducerID: m.ProducerID,
		ProducerEpoch: m.ProducerEpoch, Commit: m.Committed, CoordinatorEpoch: m.CoordinatorEpoch})
	if err != nil {
		r.s.lg.Info("transaction marker not written", "remote", r.c.remote, "topic", topic, "partition", p,
			"producer_id", m.ProducerID, "commit", m.Committed, "err", err)
	}
	return errorCode(err)
}

// completeGroupTxn commits or drops the producer's pending offsets in the
// groups of coordinator shard.
func (r *request) completeGroupTxn(ctx context.Context, m kmsg.WriteTxnMarkersRequestMarker, shard int32) int16 {
	if shard < 0 || shard >= metadata.GroupShards {
		return kerr.UnknownTopicOrPartition.Code
	}
	if r.s.groups == nil {
		return kerr.NotLeaderForPartition.Code
	}
	err := r.s.groups.CompleteTxn(ctx, shard, m.ProducerID, m.ProducerEpoch, m.Committed)
	if err == nil {
		return 0
	}
	r.s.lg.Info("transactional offsets not completed", "remote", r.c.remote, "shard", shard,
		"producer_id", m.ProducerID, "commit", m.Committed, "err", err)
	switch code := errorCode(err); {
	case errors.Is(err, groupcoord.ErrNotCoordinator), errors.Is(err, groupcoord.ErrCoordinatorNotAvailable),
		code == kerr.NotCoordinator.Code, code == kerr.CoordinatorNotAvailable.Code, code == kerr.CoordinatorLoadInProgress.Code:
		return kerr.NotLeaderForPartition.Code
	default:
		return code
	}
}
