package protocol

// AddPartitionsToTxn v0–v4. A producer adds the partitions it is about to
// write to its ongoing transaction (v0–v3: one transaction, from clients).
// As in Kafka, one unknown topic or partition fails the whole request: it
// gets UNKNOWN_TOPIC_OR_PARTITION and every other partition
// OPERATION_NOT_ATTEMPTED. Otherwise the transaction coordinator answers;
// a whole-request error (INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED,
// CONCURRENT_TRANSACTIONS, NOT_COORDINATOR…) is given to every partition,
// and before v2 PRODUCER_FENCED is INVALID_PRODUCER_EPOCH. The
// coordinator's record is durable before the answer, which waits on the
// writer (request.wait).
//
// v4 batches transactions and adds VerifyOnly: Kafka's brokers send it to a
// transactional id's coordinator to check, before appending a
// transactional batch, that the partition is in the ongoing transaction
// (KIP-890 part 1); a verification adds nothing. A group coordinator
// verifies a TxnOffsetCommit the same way, naming the group's offsets
// partition: partition <shard> of __consumer_offsets, which no log holds
// here but which a VerifyOnly request may name. Kafka reserves v4+ for
// brokers by requiring CLUSTER_ACTION; without an authorizer, as here, any
// client may send it. v5 (TRANSACTION_ABORTABLE for KIP-890 part 2
// clients) is not served: transaction.version 2 is not advertised.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/txncoord"
)

func init() { register(kmsg.AddPartitionsToTxn, 0, 4, handleAddPartitionsToTxn) }

// addPartitionsFencedSince is the first AddPartitionsToTxn version that
// knows PRODUCER_FENCED.
const addPartitionsFencedSince = 2

func handleAddPartitionsToTxn(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.AddPartitionsToTxnRequest)
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	r.wait = func() { r.addPartitionsToTxn(req, resp) }
	return resp, nil
}

// txnPartitions is one transaction of an AddPartitionsToTxn request.
type txnPartitions struct {
	id         string
	pid        int64
	epoch      int16
	verifyOnly bool
	topics     []kmsg.AddPartitionsToTxnRequestTransactionTopic
}

func (r *request) addPartitionsToTxn(req *kmsg.AddPartitionsToTxnRequest, resp *kmsg.AddPartitionsToTxnResponse) {
	if req.Version < 4 {
		tx := txnPartitions{id: req.TransactionalID, pid: req.ProducerID, epoch: req.ProducerEpoch}
		for _, t := range req.Topics {
			tx.topics = append(tx.topics, kmsg.AddPartitionsToTxnRequestTransactionTopic{Topic: t.Topic, Partitions: t.Partitions})
		}
		for _, rt := range r.addTxnPartitions(req.Version, tx) {
			st := kmsg.NewAddPartitionsToTxnResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				st.Partitions = append(st.Partitions, kmsg.AddPartitionsToTxnResponseTopicPartition{Partition: rp.Partition, ErrorCode: rp.ErrorCode})
			}
			resp.Topics = append(resp.Topics, st)
		}
		return
	}
	for _, t := range req.Transactions {
		tx := txnPartitions{id: t.TransactionalID, pid: t.ProducerID, epoch: t.ProducerEpoch, verifyOnly: t.VerifyOnly, topics: t.Topics}
		rt := kmsg.NewAddPartitionsToTxnResponseTransaction()
		rt.TransactionalID, rt.Topics = t.TransactionalID, r.addTxnPartitions(req.Version, tx)
		resp.Transactions = append(resp.Transactions, rt)
	}
}

// addTxnPartitions adds (or verifies) one transaction's partitions and
// returns their answers.
func (r *request) addTxnPartitions(version int16, tx txnPartitions) []kmsg.AddPartitionsToTxnResponseTransactionTopic {
	var parts []txncoord.TopicPartition
	seen, unknown := map[txncoord.TopicPartition]bool{}, map[txncoord.TopicPartition]bool{}
	for _, t := range tx.topics {
		lt, _ := r.s.log.Topic(t.Topic)
		for _, p := range t.Partitions {
			tp := txncoord.TopicPartition{Topic: t.Topic, Partition: p}
			if seen[tp] {
				continue // Kafka reads the request as a set
			}
			seen[tp], parts = true, append(parts, tp)
			if (lt == nil || lt.Partition(p) == nil) && !(tx.verifyOnly && isGroupOffsetsPartition(tp)) {
				unknown[tp] = true
			}
		}
	}
	codes := make(map[txncoord.TopicPartition]int16, len(parts))
	switch {
	case len(unknown) > 0:
		for _, tp := range parts {
			codes[tp] = kerr.OperationNotAttempted.Code
			if unknown[tp] {
				codes[tp] = kerr.UnknownTopicOrPartition.Code
			}
		}
	case tx.id == "":
		fillCodes(codes, parts, kerr.InvalidRequest.Code)
	case r.s.cfg.Txns == nil:
		fillCodes(codes, parts, errTxnsNotRunning.Code)
	default:
		r.coordinatorAdd(version, tx, parts, codes)
	}
	return txnPartitionAnswers(r, parts, codes)
}

// isGroupOffsetsPartition says whether tp names the offsets of the groups
// of one coordinator shard (txncoord.GroupPartition). No log holds it, but
// a group coordinator verifies a TxnOffsetCommit with it, as Kafka's
// verifies __consumer_offsets-N.
func isGroupOffsetsPartition(tp txncoord.TopicPartition) bool {
	return tp.Topic == groupOffsetsTopic && tp.Partition >= 0 && tp.Partition < txncoord.Shards
}

// coordinatorAdd asks the transaction coordinator and fills codes.
func (r *request) coordinatorAdd(version int16, tx txnPartitions, parts []txncoord.TopicPartition, codes map[txncoord.TopicPartition]int16) {
	errs, err := r.s.cfg.Txns.AddPartitions(r.ctx(), txncoord.AddPartitionsRequest{TransactionalID: tx.id,
		ProducerID: tx.pid, ProducerEpoch: tx.epoch, Partitions: parts, VerifyOnly: tx.verifyOnly})
	if err != nil {
		r.logTxnFailure("AddPartitionsToTxn", err)
		fillCodes(codes, parts, txnCode(err, version, addPartitionsFencedSince))
		return
	}
	for _, tp := range parts {
		codes[tp] = txnCode(errs[tp], version, addPartitionsFencedSince)
	}
}

func fillCodes(codes map[txncoord.TopicPartition]int16, parts []txncoord.TopicPartition, code int16) {
	for _, tp := range parts {
		codes[tp] = code
	}
}

// txnPartitionAnswers lays out partition codes by topic, in request order.
func txnPartitionAnswers(r *request, parts []txncoord.TopicPartition, codes map[txncoord.TopicPartition]int16) []kmsg.AddPartitionsToTxnResponseTransactionTopic {
	var out []kmsg.AddPartitionsToTxnResponseTransactionTopic
	for _, tp := range parts {
		i := slices.IndexFunc(out, func(t kmsg.AddPartitionsToTxnResponseTransactionTopic) bool { return t.Topic == tp.Topic })
		if i < 0 {
			st := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			st.Topic = tp.Topic
			out, i = append(out, st), len(out)
		}
		sp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
		sp.Partition, sp.ErrorCode = tp.Partition, r.code(codes[tp])
		out[i].Partitions = append(out[i].Partitions, sp)
	}
	return out
}
