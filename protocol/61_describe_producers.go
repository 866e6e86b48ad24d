package protocol

// DescribeProducers v0 (KIP-664): the idempotent and transactional
// producers a partition's owner knows, with the first offset of each one's
// open transaction (-1: none), for finding a hanging transaction. A
// partition that does not exist is UNKNOWN_TOPIC_OR_PARTITION; one this
// broker does not own is NOT_LEADER_OR_FOLLOWER, as Kafka answers from a
// broker that is not the leader.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/storage/partition"
)

func init() { register(kmsg.DescribeProducers, 0, 0, handleDescribeProducers) }

func handleDescribeProducers(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.DescribeProducersRequest)
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewDescribeProducersResponseTopic()
		st.Topic = rt.Topic
		t, _ := r.s.log.Topic(rt.Topic)
		for _, idx := range rt.Partitions {
			st.Partitions = append(st.Partitions, r.describeProducers(t, idx))
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

// describeProducers answers one partition.
func (r *request) describeProducers(t *partition.Topic, idx int32) kmsg.DescribeProducersResponseTopicPartition {
	sp := kmsg.NewDescribeProducersResponseTopicPartition()
	sp.Partition = idx
	if t == nil || t.Partition(idx) == nil {
		sp.ErrorCode = r.code(kerr.UnknownTopicOrPartition.Code)
		return sp
	}
	if code := r.s.notLeaderCode(t, idx, -1); code != 0 {
		sp.ErrorCode = r.code(code)
		return sp
	}
	if err := r.s.log.CheckLeader(t.Partition(idx)); err != nil { // the view may run ahead of the log's own hand-over
		sp.ErrorCode, sp.ErrorMessage = r.codeOf(err), errorMessage(err)
		return sp
	}
	sp.ActiveProducers = activeProducers(t.Partition(idx).Producers())
	return sp
}

// activeProducers lays out a partition's producers for the answer.
func activeProducers(ps []partition.ProducerInfo) []kmsg.DescribeProducersResponseTopicPartitionActiveProducer {
	out := make([]kmsg.DescribeProducersResponseTopicPartitionActiveProducer, 0, len(ps))
	for _, p := range ps {
		ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
		ap.ProducerID, ap.ProducerEpoch = p.ProducerID, int32(p.ProducerEpoch)
		ap.LastSequence, ap.LastTimestamp = p.LastSequence, p.LastTimestamp
		ap.CoordinatorEpoch, ap.CurrentTxnStartOffset = p.CoordinatorEpoch, p.CurrentTxnStartOffset
		out = append(out, ap)
	}
	return out
}
