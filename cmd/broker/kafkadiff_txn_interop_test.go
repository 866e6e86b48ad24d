//go:build interop

package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The versions of the transaction APIs the script speaks: transaction
// version 1 (KIP-98, KIP-447), as Sediment serves it; Kafka decides per
// request (EndTxn v5+ and Produce v12+ are version 2).
const (
	vAddPartitions = 3
	vAddOffsets    = 3
	vEndTxn        = 4
	vTxnCommit     = 3
	vDescribeTxns  = 0
	vListTxns      = 1
	vDescribeProds = 0
)

// TestInteropDiffTransactions: a transaction step by step, committed, then
// one aborted, and the errors a client can provoke. Each request, and what
// consumers see (read_committed Fetch and ListOffsets, OffsetFetch with
// require_stable), is compared with Apache Kafka's answer.
func TestInteropDiffTransactions(t *testing.T) {
	d := newDiffRun(t)
	topic, txnID, group := diffTopic(t, "t"), diffTopic(t, "txn"), diffTopic(t, "g")
	d.same("CreateTopics", func() kmsg.Request { return createTopicReq(topic, 2, 1) })
	d.waitTopics(topic)
	// Kafka creates __transaction_state on the first FindCoordinator, and
	// loads it a moment later.
	d.settle("transaction coordinator", func(*diffSide) kmsg.Request { return findTxnCoordinatorReq(txnID) },
		func(r kmsg.Response) bool {
			c := r.(*kmsg.FindCoordinatorResponse).Coordinators
			return len(c) == 1 && c[0].ErrorCode == 0
		})
	d.same("FindCoordinator transaction", func() kmsg.Request { return findTxnCoordinatorReq(txnID) })
	d.settle("transactional id", func(*diffSide) kmsg.Request { return txnInitReq(txnID, 60000) }, func(r kmsg.Response) bool {
		return r.(*kmsg.InitProducerIDResponse).ErrorCode == 0
	})
	// And __consumer_offsets on the first FindCoordinator for a group.
	d.settle("group coordinator", func(*diffSide) kmsg.Request { return findCoordinatorReq(group) }, func(r kmsg.Response) bool {
		c := r.(*kmsg.FindCoordinatorResponse).Coordinators
		return len(c) == 1 && c[0].ErrorCode == 0
	})
	d.settle("group offsets", func(*diffSide) kmsg.Request { return offsetFetchReq(group, topic, 0) }, func(r kmsg.Response) bool {
		g := r.(*kmsg.OffsetFetchResponse).Groups
		return len(g) == 1 && g[0].ErrorCode == 0
	})
	d.same("InitProducerID timeout above the maximum", func() kmsg.Request { return txnInitReq(txnID+"-slow", 900001) })
	d.txnInit("InitProducerID transactional", txnID)

	// Outside a transaction.
	d.exchange("Produce transactional outside a transaction", func(s *diffSide) kmsg.Request { return s.txnProduce(topic, 0, txnID, 0, "t0") })
	d.exchange("EndTxn with no transaction", func(s *diffSide) kmsg.Request { return s.endTxnReq(txnID, s.producerEpoch, false) })
	d.exchange("AddPartitionsToTxn unknown producer", func(s *diffSide) kmsg.Request {
		req := s.addPartitionsReq(txnID, topic, 0)
		req.ProducerID++
		return req
	})

	// A committed transaction with offsets.
	d.exchange("AddPartitionsToTxn", func(s *diffSide) kmsg.Request { return s.addPartitionsReq(txnID, topic, 0) })
	d.exchange("Produce transactional", func(s *diffSide) kmsg.Request { return s.txnProduce(topic, 0, txnID, 0, "c0", "c1") })
	d.exchange("Produce transactional to a partition not in it", func(s *diffSide) kmsg.Request { return s.txnProduce(topic, 1, txnID, 0, "x0") })
	d.exchange("AddOffsetsToTxn", func(s *diffSide) kmsg.Request { return s.addOffsetsReq(txnID, group) })
	d.exchange("AddOffsetsToTxn stale epoch", func(s *diffSide) kmsg.Request {
		req := s.addOffsetsReq(txnID, group)
		req.ProducerEpoch--
		return req
	})
	d.exchange("TxnOffsetCommit", func(s *diffSide) kmsg.Request { return s.txnCommitReq(txnID, group, topic, 0, 2) })
	d.exchange("TxnOffsetCommit unknown member", func(s *diffSide) kmsg.Request {
		req := s.txnCommitReq(txnID, group, topic, 0, 2)
		req.Generation, req.MemberID = 7, "nobody"
		return req
	})
	d.same("OffsetFetch require_stable pending", func() kmsg.Request { return stableFetchReq(group, topic, 0) })
	d.same("ListOffsets read_committed open", func() kmsg.Request { return committedListOffsetsReq(topic, 0) })
	d.same("ListOffsets read_uncommitted open", func() kmsg.Request { return listOffsetsReq(topic, 0, -1) })
	d.same("Fetch read_committed open", func() kmsg.Request { return committedFetchReq(topic, 0, 0) })
	d.describeTxns("DescribeTransactions ongoing", txnID)
	d.exchange("ListTransactions ongoing", func(s *diffSide) kmsg.Request { return s.listTxnsReq("Ongoing") })
	d.same("DescribeProducers open", func() kmsg.Request { return describeProducersReq(topic, 0) })
	d.exchange("EndTxn commit", func(s *diffSide) kmsg.Request { return s.endTxnReq(txnID, s.producerEpoch, true) })
	d.settle("the commit marker", func(*diffSide) kmsg.Request { return committedListOffsetsReq(topic, 0) }, func(r kmsg.Response) bool {
		p := r.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
		return p.ErrorCode == 0 && p.Offset == 3
	})
	d.settle("the committed offsets", func(*diffSide) kmsg.Request { return stableFetchReq(group, topic, 0) }, func(r kmsg.Response) bool {
		g := r.(*kmsg.OffsetFetchResponse).Groups
		return len(g) == 1 && len(g[0].Topics) == 1 && g[0].Topics[0].Partitions[0].ErrorCode == 0
	})
	d.same("OffsetFetch require_stable committed", func() kmsg.Request { return stableFetchReq(group, topic, 0) })
	d.same("Fetch read_committed committed", func() kmsg.Request { return committedFetchReq(topic, 0, 0) })
	d.same("Fetch read_committed committed marker", func() kmsg.Request { return committedFetchReq(topic, 0, 2) })
	d.describeTxns("DescribeTransactions committed", txnID)
	d.exchange("EndTxn commit again", func(s *diffSide) kmsg.Request { return s.endTxnReq(txnID, s.producerEpoch, true) })
	d.exchange("EndTxn abort after the commit", func(s *diffSide) kmsg.Request { return s.endTxnReq(txnID, s.producerEpoch, false) })
	d.same("DescribeProducers committed", func() kmsg.Request { return describeProducersReq(topic, 0) })

	// An aborted transaction.
	d.exchange("AddPartitionsToTxn second", func(s *diffSide) kmsg.Request { return s.addPartitionsReq(txnID, topic, 1) })
	d.exchange("Produce transactional second", func(s *diffSide) kmsg.Request { return s.txnProduce(topic, 1, txnID, 0, "a0", "a1", "a2") })
	d.exchange("EndTxn stale epoch", func(s *diffSide) kmsg.Request { return s.endTxnReq(txnID, s.producerEpoch-1, false) })
	d.exchange("EndTxn abort", func(s *diffSide) kmsg.Request { return s.endTxnReq(txnID, s.producerEpoch, false) })
	d.settle("the abort marker", func(*diffSide) kmsg.Request { return committedListOffsetsReq(topic, 1) }, func(r kmsg.Response) bool {
		p := r.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
		return p.ErrorCode == 0 && p.Offset == 4
	})
	d.same("Fetch read_committed aborted", func() kmsg.Request { return committedFetchReq(topic, 1, 0) })
	d.same("Fetch read_uncommitted aborted", func() kmsg.Request { return fetchReq(topic, 1, 0, 1<<20) })
	d.same("Fetch read_committed aborted marker", func() kmsg.Request { return committedFetchReq(topic, 1, 3) })
	d.describeTxns("DescribeTransactions aborted", txnID)
	d.describeTxns("DescribeTransactions unknown", txnID+"-none")
	d.exchange("InitProducerID wrong epoch", func(s *diffSide) kmsg.Request {
		req := txnInitReq(txnID, 60000)
		req.ProducerID, req.ProducerEpoch = s.producerID, s.producerEpoch+5
		return req
	})
	// KIP-360: a producer that lost InitProducerID's answer sends its
	// current id and epoch, and gets the epoch bumped.
	d.exchange("InitProducerID retried", func(s *diffSide) kmsg.Request {
		req := txnInitReq(txnID, 60000)
		req.ProducerID, req.ProducerEpoch = s.producerID, s.producerEpoch
		return req
	})
	d.txnInit("InitProducerID transactional again", txnID)
}

func findTxnCoordinatorReq(txnID string) *kmsg.FindCoordinatorRequest {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.SetVersion(vFindCoord)
	req.CoordinatorType, req.CoordinatorKeys = 1, []string{txnID}
	return req
}

// txnInitReq asks for the producer id of a transactional id.
func txnInitReq(txnID string, timeoutMillis int32) *kmsg.InitProducerIDRequest {
	req := initProducerReq()
	req.TransactionalID = kmsg.StringPtr(txnID)
	req.TransactionTimeoutMillis = timeoutMillis
	return req
}

// txnInit sends InitProducerID for txnID and remembers the producer id and
// epoch each broker gave.
func (d *diffRun) txnInit(step, txnID string) {
	d.t.Helper()
	resps := d.same(step, func() kmsg.Request { return txnInitReq(txnID, 60000) })
	for i, s := range d.sides {
		r := resps[i].(*kmsg.InitProducerIDResponse)
		if r.ErrorCode != 0 {
			d.t.Fatalf("%s: %s: error %d", step, s.name, r.ErrorCode)
		}
		s.producerID, s.producerEpoch = r.ProducerID, r.ProducerEpoch
	}
}

// txnProduce sends a transactional batch of values from this side's
// producer, at sequence seq.
func (s *diffSide) txnProduce(topic string, partition int32, txnID string, seq int32, values ...string) *kmsg.ProduceRequest {
	b := diffBatch{timestamp: diffTS, producerID: s.producerID, epoch: s.producerEpoch, sequence: seq, values: values}.encode()
	b[22] |= 0x10 // attributes: transactional
	req := produceReq(topic, partition, -1, fixCRC(b))
	req.TransactionID = kmsg.StringPtr(txnID)
	return req
}

func (s *diffSide) addPartitionsReq(txnID, topic string, partitions ...int32) *kmsg.AddPartitionsToTxnRequest {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.SetVersion(vAddPartitions)
	req.TransactionalID, req.ProducerID, req.ProducerEpoch = txnID, s.producerID, s.producerEpoch
	rt := kmsg.NewAddPartitionsToTxnRequestTopic()
	rt.Topic, rt.Partitions = topic, partitions
	req.Topics = append(req.Topics, rt)
	return req
}

func (s *diffSide) addOffsetsReq(txnID, group string) *kmsg.AddOffsetsToTxnRequest {
	req := kmsg.NewPtrAddOffsetsToTxnRequest()
	req.SetVersion(vAddOffsets)
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = txnID, s.producerID, s.producerEpoch, group
	return req
}

// txnCommitReq commits offset for topic/partition in the transaction, as a
// producer outside the group does (generation -1, no member).
func (s *diffSide) txnCommitReq(txnID, group, topic string, partition int32, offset int64) *kmsg.TxnOffsetCommitRequest {
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.SetVersion(vTxnCommit)
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = txnID, group, s.producerID, s.producerEpoch
	req.Generation, req.MemberID = -1, ""
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset, rp.LeaderEpoch = partition, offset, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func (s *diffSide) endTxnReq(txnID string, epoch int16, commit bool) *kmsg.EndTxnRequest {
	req := kmsg.NewPtrEndTxnRequest()
	req.SetVersion(vEndTxn)
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = txnID, s.producerID, epoch, commit
	return req
}

func stableFetchReq(group, topic string, partitions ...int32) *kmsg.OffsetFetchRequest {
	req := offsetFetchReq(group, topic, partitions...)
	req.RequireStable = true
	return req
}

func committedListOffsetsReq(topic string, partition int32) *kmsg.ListOffsetsRequest {
	req := listOffsetsReq(topic, partition, -1)
	req.IsolationLevel = 1
	return req
}

func committedFetchReq(topic string, partition int32, offset int64) *kmsg.FetchRequest {
	req := fetchReq(topic, partition, offset, 1<<20)
	req.IsolationLevel = 1
	return req
}

// describeTxns compares DescribeTransactions of ids with each
// transaction's topics in name order: a transaction's partitions are a set,
// which Kafka lists in its hash set's order.
func (d *diffRun) describeTxns(step string, ids ...string) {
	d.t.Helper()
	var resps [2]kmsg.Response
	for i, s := range d.sides {
		resp, err := s.wire.do(describeTxnsReq(ids...))
		if err != nil {
			d.t.Fatalf("%s: %s: %v", step, s.name, err)
		}
		for _, st := range resp.(*kmsg.DescribeTransactionsResponse).TransactionStates {
			slices.SortFunc(st.Topics, func(a, b kmsg.DescribeTransactionsResponseTransactionStateTopic) int {
				return strings.Compare(a.Topic, b.Topic)
			})
		}
		resps[i] = resp
	}
	d.compare(step, resps[0], resps[1])
}

func describeTxnsReq(ids ...string) *kmsg.DescribeTransactionsRequest {
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.SetVersion(vDescribeTxns)
	req.TransactionalIDs = ids
	return req
}

// listTxnsReq lists this side's producer's transactional ids in states:
// the reference broker is shared with the other tests.
func (s *diffSide) listTxnsReq(states ...string) *kmsg.ListTransactionsRequest {
	req := kmsg.NewPtrListTransactionsRequest()
	req.SetVersion(vListTxns)
	req.StateFilters, req.ProducerIDFilters = states, []int64{s.producerID}
	return req
}

func describeProducersReq(topic string, partitions ...int32) *kmsg.DescribeProducersRequest {
	req := kmsg.NewPtrDescribeProducersRequest()
	req.SetVersion(vDescribeProds)
	rt := kmsg.NewDescribeProducersRequestTopic()
	rt.Topic, rt.Partitions = topic, partitions
	req.Topics = append(req.Topics, rt)
	return req
}
