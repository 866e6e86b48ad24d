package protocol

import "github.com/twmb/franz-go/pkg/kmsg"

// addTxnSeeds adds the transaction APIs' fuzz seeds, and the transactional
// forms of Produce, Fetch and ListOffsets.
func addTxnSeeds(add func(string, kmsg.Request, ...int16), topic string, id [16]byte) {
	add("transactional_kip360", initTxnReq(3, "fuzz-txn", 7, 1), 3, 5)
	addParts := kmsg.NewPtrAddPartitionsToTxnRequest()
	addParts.TransactionalID, addParts.ProducerID, addParts.ProducerEpoch = "fuzz-txn", 1, 0
	addParts.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: topic, Partitions: []int32{0, 1}}, {Topic: "nope", Partitions: []int32{0}}}
	add("client", addParts, 0, 2, 3)
	verify := kmsg.NewPtrAddPartitionsToTxnRequest()
	verify.Transactions = []kmsg.AddPartitionsToTxnRequestTransaction{
		{TransactionalID: "fuzz-txn", ProducerID: 1, ProducerEpoch: 0, VerifyOnly: true,
			Topics: []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: topic, Partitions: []int32{0}}}},
		{TransactionalID: "other", ProducerID: 2, ProducerEpoch: 3,
			Topics: []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: topic, Partitions: []int32{1}}}},
	}
	add("batched_verify", verify, 4)
	addOffsets := kmsg.NewPtrAddOffsetsToTxnRequest()
	addOffsets.TransactionalID, addOffsets.ProducerID, addOffsets.ProducerEpoch, addOffsets.Group = "fuzz-txn", 1, 0, "fuzz-group"
	add("group", addOffsets, 0, 3, 4)
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = "fuzz-txn", 1, 0, true
	add("commit", end, 0, 2, 4)
	markers := kmsg.NewPtrWriteTxnMarkersRequest()
	markers.Markers = []kmsg.WriteTxnMarkersRequestMarker{{ProducerID: 1, ProducerEpoch: 0, Committed: false, CoordinatorEpoch: 0,
		Topics: []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: topic, Partitions: []int32{0, 5}}, {Topic: groupOffsetsTopic, Partitions: []int32{3, 99}}}}}
	add("abort", markers, 0, 1)
	tcommit := kmsg.NewPtrTxnOffsetCommitRequest()
	tcommit.TransactionalID, tcommit.Group, tcommit.ProducerID, tcommit.ProducerEpoch = "fuzz-txn", "fuzz-group", 1, 0
	tcommit.Generation, tcommit.MemberID = 1, "m"
	tcommit.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: topic, Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{
		{Partition: 0, Offset: 1, LeaderEpoch: -1, Metadata: ptr("m")}, {Partition: 7, Offset: 2, LeaderEpoch: -1}}}}
	add("offsets", tcommit, 0, 2, 3, 4)
	describe := kmsg.NewPtrDescribeTransactionsRequest()
	describe.TransactionalIDs = []string{"fuzz-txn", "", "other"}
	add("ids", describe, 0)
	list := kmsg.NewPtrListTransactionsRequest()
	list.StateFilters, list.ProducerIDFilters, list.DurationFilterMillis = []string{"Ongoing", "Bogus"}, []int64{1, 2}, 1000
	add("filtered", list, 0, 1)
	producers := kmsg.NewPtrDescribeProducersRequest()
	producers.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: topic, Partitions: []int32{0, 1, 9}}, {Topic: "nope", Partitions: []int32{0}}}
	add("partitions", producers, 0)

	txnBatch := plainBatch(1, 4, 1_700_000_000_000)
	txnBatch.producerID, txnBatch.epoch, txnBatch.seq, txnBatch.transactional = 1, 0, 0, true
	produce := produceReq(9, -1, topic, 1, txnBatch.build(nopTB{}))
	produce.TransactionID = ptr("fuzz-txn")
	add("transactional", produce, 3, 9)
	fetch := fetchReq(4, topic, id, 0, 0)
	fetch.IsolationLevel, fetch.MaxWaitMillis, fetch.MinBytes = readCommitted, 100, 1
	add("read_committed", fetch, 4, 11, 18)
	lo := listOffsetsReq(2, topic, []int64{-1, -2, 1_700_000_000_001})
	lo.IsolationLevel = readCommitted
	add("read_committed", lo, 2, 11)
}

// initTxnReq is an InitProducerId for a transactional id, with the
// producer's current id and epoch (-1, -1: none).
func initTxnReq(version int16, txnID string, pid int64, epoch int16) *kmsg.InitProducerIDRequest {
	req := initProducerIDReq(version, &txnID)
	req.ProducerID, req.ProducerEpoch = pid, epoch
	return req
}
