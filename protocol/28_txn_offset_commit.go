package protocol

// TxnOffsetCommit v0–v4. A transactional producer commits a consumer
// group's offsets inside its transaction (after AddOffsetsToTxn): the group
// coordinator makes them durable as pending, invisible to OffsetFetch until
// the transaction commits and dropped if it aborts. As in Kafka, topics and
// partitions that do not exist are UNKNOWN_TOPIC_OR_PARTITION (the others
// are committed), and an empty group id is INVALID_GROUP_ID. v3+ carries
// the member id, group instance id and generation (KIP-447), checked as
// Kafka checks them for transactional commits: a member of a group
// commits with its current generation (ILLEGAL_GENERATION,
// UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID otherwise; a generation for a
// group that does not exist is ILLEGAL_GENERATION); a commit without them
// (v0–v2, or generation -1 and no member) is accepted whatever the group's
// state. A producer with an old epoch is INVALID_PRODUCER_EPOCH at every
// version: Kafka's log refuses its write with that code. Before v2
// COORDINATOR_LOAD_IN_PROGRESS is COORDINATOR_NOT_AVAILABLE (KAFKA-7296).
// The answer waits on the writer (request.wait). v5 (the offsets added to
// the transaction implicitly, KIP-890 part 2) is not served.
//
// As Kafka 3.6+ does, the group coordinator first asks the transactional
// id's coordinator (Config.TxnVerify, which in a cluster may send
// AddPartitionsToTxn v4 VerifyOnly to another broker) whether the group's
// offsets partition (__consumer_offsets, the group's shard) is in the
// producer's ongoing transaction, i.e. whether AddOffsetsToTxn came first:
// otherwise no marker would ever complete the pending offsets. A refusal
// commits nothing and answers, on every partition, Kafka's code:
// INVALID_TXN_STATE (the group is not in an ongoing transaction),
// INVALID_PRODUCER_ID_MAPPING, INVALID_PRODUCER_EPOCH (fenced),
// CONCURRENT_TRANSACTIONS (the transaction is ending), and for a
// coordinator that cannot tell now COORDINATOR_NOT_AVAILABLE,
// NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS (see txnOffsetVerifyErr).

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/groupcoord"
	"github.com/sediment-io/sediment/txncoord"
)

func init() { register(kmsg.TxnOffsetCommit, 0, 4, handleTxnOffsetCommit) }

func handleTxnOffsetCommit(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.TxnOffsetCommitRequest)
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	r.wait = func() { r.txnOffsetCommit(req, resp) }
	return resp, nil
}

func (r *request) txnOffsetCommit(req *kmsg.TxnOffsetCommitRequest, resp *kmsg.TxnOffsetCommitResponse) {
	cr := groupcoord.TxnCommitRequest{CommitRequest: groupcoord.CommitRequest{Group: req.Group, MemberID: req.MemberID,
		InstanceID: req.InstanceID, Generation: req.Generation},
		TransactionalID: req.TransactionalID, ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch}
	var slots []commitSlot
	for ti, rt := range req.Topics {
		st := kmsg.NewTxnOffsetCommitResponseTopic()
		st.Topic = rt.Topic
		lt, _ := r.s.log.Topic(rt.Topic)
		for pi, rp := range rt.Partitions {
			sp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			sp.Partition = rp.Partition
			if lt == nil || lt.Partition(rp.Partition) == nil {
				sp.ErrorCode = r.code(kerr.UnknownTopicOrPartition.Code)
			} else {
				slots = append(slots, commitSlot{ti, pi})
				cr.Offsets = append(cr.Offsets, groupcoord.CommitOffset{Topic: rt.Topic, Partition: rp.Partition,
					Offset: rp.Offset, LeaderEpoch: rp.LeaderEpoch, Metadata: rp.Metadata})
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if len(slots) == 0 {
		return
	}
	res := groupcoord.CommitResult{Err: groupcoord.ErrCoordinatorNotAvailable}
	switch {
	case req.Group == "":
		res.Err = groupcoord.ErrInvalidGroupID
	case r.s.groups != nil:
		if err := r.verifyTxnOffsets(req); err != nil {
			res.Err = err
			break
		}
		res, _ = awaitGroup(r, r.s.groups.TxnCommit(cr), res)
	}
	for i, s := range slots {
		err := res.Err
		if err == nil {
			err = res.Partitions[i]
		}
		resp.Topics[s.topic].Partitions[s.part].ErrorCode = r.code(txnOffsetCommitCode(err, req.Version))
	}
}

// txnOffsetCommitCode maps a TxnOffsetCommit partition's error to its code
// at version.
func txnOffsetCommitCode(err error, version int16) int16 {
	code := errorCode(err)
	switch {
	case code == kerr.ProducerFenced.Code:
		return kerr.InvalidProducerEpoch.Code
	case code == kerr.CoordinatorLoadInProgress.Code && version < 2:
		return kerr.CoordinatorNotAvailable.Code
	}
	return code
}

// verifyTxnOffsets asks the transaction coordinator whether req's group is
// in the producer's ongoing transaction; nil when it is, else the error
// every partition answers.
func (r *request) verifyTxnOffsets(req *kmsg.TxnOffsetCommitRequest) error {
	verify := r.s.txnVerifier()
	if verify == nil {
		return kerr.CoordinatorNotAvailable
	}
	err := verify(r.ctx(), req.TransactionalID, req.ProducerID, req.ProducerEpoch, txncoord.GroupPartition(req.Group))
	if err != nil {
		var ke *kerr.Error
		if !errors.As(err, &ke) {
			r.s.lg.Warn("transactional offset commit: verification failed", "transactional_id", req.TransactionalID,
				"group", req.Group, "err", err)
		}
	}
	return txnOffsetVerifyErr(err)
}

// txnOffsetVerifyErr maps the transaction coordinator's answer to a
// verification as Kafka's AddPartitionsToTxnManager and its group
// coordinator's CoordinatorOperationExceptionHelper do: a fenced producer
// is INVALID_PRODUCER_EPOCH, a network failure COORDINATOR_LOAD_IN_PROGRESS
// (which clients retry without looking the coordinator up again), a
// coordinator that is not there COORDINATOR_NOT_AVAILABLE; the other codes
// (INVALID_TXN_STATE, INVALID_PRODUCER_ID_MAPPING, CONCURRENT_TRANSACTIONS,
// NOT_COORDINATOR…) pass through. An internal failure is
// COORDINATOR_NOT_AVAILABLE, retriable.
func txnOffsetVerifyErr(err error) error {
	if err == nil {
		return nil
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return kerr.CoordinatorNotAvailable
	}
	switch ke.Code {
	case kerr.ProducerFenced.Code:
		return kerr.InvalidProducerEpoch
	case kerr.TransactionAbortable.Code:
		return kerr.InvalidTxnState
	case kerr.NetworkException.Code:
		return kerr.CoordinatorLoadInProgress
	case kerr.UnknownTopicOrPartition.Code, kerr.NotEnoughReplicas.Code, kerr.RequestTimedOut.Code:
		return kerr.CoordinatorNotAvailable
	case kerr.NotLeaderForPartition.Code, kerr.KafkaStorageError.Code:
		return kerr.NotCoordinator
	}
	return ke
}
