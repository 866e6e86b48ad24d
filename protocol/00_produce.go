package protocol

// Produce v3–v13: record batches (magic 2) only, exactly one batch per
// partition. Each batch is validated (size, CRC, record count,
// max.message.bytes) and appended in request order on the reader goroutine,
// so pipelined requests from one producer keep their order; the durability
// wait (WAL fsync, or the object commit with --durability object) runs on
// the writer. acks=0 gets no response at all (and, as in Kafka, a failed
// acks=0 produce closes the connection); acks=1 and acks=-1 both wait
// for durability: nothing is acknowledged that a crash can take back.
// Idempotent batches are deduplicated against the producer's last five
// batches per partition (a retried duplicate is answered with the original
// offset). Transactional batches need the request's transactional id
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED for the whole request without
// one, as in Kafka, and INVALID_PRODUCER_ID_MAPPING when they come from more
// than one producer); a producer's batch to a partition where it has no
// open transaction yet is first verified with the transaction coordinator
// (KIP-890 part 1, see verifyTxn). v13 names topics by id. In a cluster a partition this broker
// does not own is NOT_LEADER_OR_FOLLOWER, and from v10 the answer names the
// current leader and its endpoint (KIP-951) so that the client moves
// without a metadata round trip.

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/partition"
)

func init() { register(kmsg.Produce, 3, 13, handleProduce) }

// appended is one partition's append waiting for durability.
type appended struct {
	res  partition.AppendResult
	resp *kmsg.ProduceResponseTopicPartition
}

func handleProduce(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.ProduceRequest)
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	ctx, cancel := context.WithTimeout(r.ctx(), produceTimeout(req))
	defer cancel()
	var waits []appended
	refused, refusal := produceTxnCheck(req)
	for _, rt := range req.Topics {
		t := r.produceTopic(req, rt)
		st := kmsg.NewProduceResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		st.Partitions = make([]kmsg.ProduceResponseTopicPartition, len(rt.Partitions))
		for i, rp := range rt.Partitions {
			sp := &st.Partitions[i]
			*sp = kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			if refused != 0 {
				sp.ErrorCode, sp.BaseOffset, sp.ErrorMessage = r.code(refused), -1, errorMessage(refusal)
				continue
			}
			if res, ok := r.producePartition(ctx, req, t, rp, sp); ok {
				waits = append(waits, appended{res, sp})
			}
		}
		resp.Topics = append(resp.Topics, st)
	}
	if req.Acks == 0 {
		// Kafka never answers acks=0, and closes the connection when
		// the produce failed (see request.closeAfter).
		r.noResponse, r.closeAfter = true, len(r.errs) > 0
	}
	if len(waits) > 0 {
		r.wait = func() {
			r.awaitDurable(req, waits)
			r.produceLeaderHints(req, resp)
		}
	} else {
		r.produceLeaderHints(req, resp)
	}
	return resp, nil
}

// produceLeaderHints names, from v10 in a cluster, the current leader of
// every partition answered NOT_LEADER_OR_FOLLOWER, and the endpoints of
// those leaders.
func (r *request) produceLeaderHints(req *kmsg.ProduceRequest, resp *kmsg.ProduceResponse) {
	if r.s.cfg.Cluster == nil || req.Version < 10 {
		return
	}
	var c clusterState
	read := false
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			sp := &resp.Topics[i].Partitions[j]
			if !hinted(sp.ErrorCode) {
				continue
			}
			t := r.produceTopic(req, req.Topics[i])
			if t == nil {
				continue
			}
			if !read {
				c, read = r.s.cluster(), true
			}
			cur := c.currentLeaderOf(t, sp.Partition)
			sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch = cur.node, cur.epoch
			addProduceEndpoint(resp, cur)
		}
	}
}

// addProduceEndpoint adds a hinted leader's endpoint, once per broker.
func addProduceEndpoint(resp *kmsg.ProduceResponse, cur currentLeader) {
	if cur.endpoint == nil || slices.ContainsFunc(resp.Brokers, func(b kmsg.ProduceResponseBroker) bool { return b.NodeID == cur.node }) {
		return
	}
	b := kmsg.NewProduceResponseBroker()
	b.NodeID, b.Host, b.Port, b.Rack = cur.node, cur.endpoint.Host, cur.endpoint.Port, rackPtr(cur.endpoint.Rack)
	resp.Brokers = append(resp.Brokers, b)
}

// produceTopic resolves a produce topic, nil when unknown.
func (r *request) produceTopic(req *kmsg.ProduceRequest, rt kmsg.ProduceRequestTopic) *partition.Topic {
	if req.Version >= 13 {
		t, _ := r.s.log.TopicByID(metadata.TopicID(rt.TopicID))
		return t
	}
	t, _ := r.s.log.Topic(rt.Topic)
	return t
}

// producePartition appends one partition's batch and fills its response;
// ok says an append happened that must be waited for.
func (r *request) producePartition(ctx context.Context, req *kmsg.ProduceRequest, t *partition.Topic, rp kmsg.ProduceRequestTopicPartition,
	sp *kmsg.ProduceResponseTopicPartition) (partition.AppendResult, bool) {
	fail := func(code int16, err error) (partition.AppendResult, bool) {
		sp.ErrorCode, sp.BaseOffset = r.code(code), -1
		sp.ErrorMessage = errorMessage(err)
		return partition.AppendResult{}, false
	}
	switch {
	case req.Acks != 0 && req.Acks != 1 && req.Acks != -1:
		return fail(kerr.InvalidRequiredAcks.Code, nil)
	case t == nil && req.Version >= 13:
		return fail(kerr.UnknownTopicID.Code, nil)
	case t == nil || t.Partition(rp.Partition) == nil:
		return fail(kerr.UnknownTopicOrPartition.Code, nil)
	}
	if code := r.s.notLeaderCode(t, rp.Partition, -1); code != 0 {
		return fail(code, nil)
	}
	if code, err := batchFraming(rp.Records); err != nil {
		return fail(code, err)
	}
	if tb, ok := txnBatchOf(rp.Records); ok {
		if code, err := r.verifyTxn(ctx, req, t.Partition(rp.Partition), tb); code != 0 {
			return fail(code, err)
		}
	}
	res, err := r.s.log.Append(ctx, t.Partition(rp.Partition), rp.Records)
	if err != nil {
		code := errorCode(err)
		if code == kerr.CorruptMessage.Code || code == kerr.InvalidRecord.Code {
			r.s.lg.Info("rejected record batch", "remote", r.c.remote, "topic", t.Name, "partition", rp.Partition, "err", err)
		}
		res, ok := fail(code, err)
		if withLogStart(code) {
			sp.LogStartOffset, _ = t.Partition(rp.Partition).Offsets()
		}
		return res, ok
	}
	sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset = res.BaseOffset, res.LogAppendTime, res.LogStartOffset
	return res, true
}

// withLogStart says whether Kafka answers a failed append with the
// partition's log start offset: it does for a rejected producer state
// (sequence, epoch), which the Java producer compares with its last acked
// offset to tell a producer that retention removed from a real gap, and
// answers -1 for a batch it could not read or accept as such.
func withLogStart(code int16) bool {
	return code == kerr.OutOfOrderSequenceNumber.Code || code == kerr.InvalidProducerEpoch.Code
}

// awaitDurable waits, within the request's timeout, until every append is
// durable; a partition that does not make it is answered with the error.
func (r *request) awaitDurable(req *kmsg.ProduceRequest, waits []appended) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx()), produceTimeout(req))
	defer cancel()
	for _, w := range waits {
		if err := r.s.log.Wait(ctx, w.res); err != nil {
			w.resp.ErrorCode, w.resp.BaseOffset = r.codeOf(err), -1
			w.resp.ErrorMessage = errorMessage(err)
		}
	}
}

// produceTimeout is the request's timeout_ms, or 30 s when it gives none.
func produceTimeout(req *kmsg.ProduceRequest) time.Duration {
	if req.TimeoutMillis <= 0 {
		return 30 * time.Second
	}
	return time.Duration(req.TimeoutMillis) * time.Millisecond
}

// batchFraming checks that records frame at least one batch the way
// Kafka's batch iterator does: with no whole batch (empty, or the first one
// longer than what was sent) Kafka answers INVALID_RECORD, and a size field
// below the smallest possible record is CORRUPT_MESSAGE. The partition
// validates the rest.
func batchFraming(records []byte) (int16, error) {
	const logOverhead, minRecordSize, headerUpToMagic = 12, 14, 17
	if len(records) < logOverhead {
		return kerr.InvalidRecord.Code, fmt.Errorf("%d bytes of records hold no record batch", len(records))
	}
	size := int64(int32(binary.BigEndian.Uint32(records[8:])))
	if size < minRecordSize {
		return kerr.CorruptMessage.Code, fmt.Errorf("record batch size %d is below the minimum %d", size, minRecordSize)
	}
	if len(records) < headerUpToMagic || int64(len(records)) < size+logOverhead {
		return kerr.InvalidRecord.Code, fmt.Errorf("record batch of %d bytes, only %d sent", size+logOverhead, len(records))
	}
	return 0, nil
}
