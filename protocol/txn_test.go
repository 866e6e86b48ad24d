package protocol

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/internal/testwait"
	"github.com/sediment-io/sediment/storage/record"
)

// txnProducer drives one transactional id over a raw connection, the way
// a client library does: InitProducerId, AddPartitionsToTxn, transactional
// produces with per-partition sequences, AddOffsetsToTxn,
// TxnOffsetCommit, EndTxn.
type txnProducer struct {
	t     *testing.T
	c     *rawClient
	id    string
	pid   int64
	epoch int16
	seq   map[string]int32 // next sequence by "topic/partition"
}

// newTxnProducer initializes a transactional id, waiting out the
// CONCURRENT_TRANSACTIONS the coordinator answers while it aborts the
// previous producer's open transaction.
func newTxnProducer(t *testing.T, b *testBroker, id string) *txnProducer {
	t.Helper()
	p := &txnProducer{t: t, c: b.dial(), id: id, seq: map[string]int32{}}
	var resp *kmsg.InitProducerIDResponse
	testwait.Until(t, ioBound, func() bool {
		resp = roundTrip[*kmsg.InitProducerIDResponse](p.c, initTxnReq(4, id, -1, -1))
		return resp.ErrorCode != kerr.ConcurrentTransactions.Code
	}, "InitProducerId %s kept answering CONCURRENT_TRANSACTIONS", id)
	wantCode(t, "InitProducerId "+id, resp.ErrorCode, 0)
	p.pid, p.epoch = resp.ProducerID, resp.ProducerEpoch
	return p
}

// addPartitionsReq is an AddPartitionsToTxn (v0–v3) of the producer.
func (p *txnProducer) addPartitionsReq(version int16, topic string, parts ...int32) *kmsg.AddPartitionsToTxnRequest {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch = version, p.id, p.pid, p.epoch
	req.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: topic, Partitions: parts}}
	return req
}

// addPartitionsCodes adds partitions and returns their codes in order.
func (p *txnProducer) addPartitionsCodes(version int16, topic string, parts ...int32) []int16 {
	p.t.Helper()
	resp := roundTrip[*kmsg.AddPartitionsToTxnResponse](p.c, p.addPartitionsReq(version, topic, parts...))
	var out []int16
	for _, t := range resp.Topics {
		for _, sp := range t.Partitions {
			out = append(out, sp.ErrorCode)
		}
	}
	return out
}

// addPartitions adds partitions and fails the test on any error.
func (p *txnProducer) addPartitions(topic string, parts ...int32) {
	p.t.Helper()
	wantCodes(p.t, "AddPartitionsToTxn", p.addPartitionsCodes(3, topic, parts...), 0)
}

// batch is the producer's next transactional batch of n records for a
// partition (the sequence advances only when the produce succeeds).
func (p *txnProducer) batch(topic string, part int32, n int) []byte {
	s := plainBatch(n, 8, 1_700_000_000_000)
	s.producerID, s.epoch, s.seq, s.transactional = p.pid, p.epoch, p.seq[fmt.Sprint(topic, "/", part)], true
	return s.build(p.t)
}

// produce sends the next transactional batch of n records.
func (p *txnProducer) produce(topic string, part int32, n int) kmsg.ProduceResponseTopicPartition {
	p.t.Helper()
	req := produceReq(9, -1, topic, part, p.batch(topic, part, n))
	req.TransactionID = &p.id
	resp := roundTrip[*kmsg.ProduceResponse](p.c, req)
	sp := resp.Topics[0].Partitions[0]
	if sp.ErrorCode == 0 {
		p.seq[fmt.Sprint(topic, "/", part)] += int32(n)
	}
	return sp
}

// mustProduce produces and returns the base offset.
func (p *txnProducer) mustProduce(topic string, part int32, n int) int64 {
	p.t.Helper()
	sp := p.produce(topic, part, n)
	wantCode(p.t, "transactional produce", sp.ErrorCode, 0)
	return sp.BaseOffset
}

// addOffsets adds a group to the transaction (AddOffsetsToTxn at version).
func (p *txnProducer) addOffsets(version int16, group string) int16 {
	p.t.Helper()
	req := kmsg.NewPtrAddOffsetsToTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = version, p.id, p.pid, p.epoch, group
	return roundTrip[*kmsg.AddOffsetsToTxnResponse](p.c, req).ErrorCode
}

// txnCommitReq commits offset for parts of topic in the transaction.
func (p *txnProducer) txnCommitReq(version int16, group, member string, gen int32, topic string, offset int64, parts ...int32) *kmsg.TxnOffsetCommitRequest {
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.Version, req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = version, p.id, group, p.pid, p.epoch
	req.MemberID, req.Generation = member, gen
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = topic
	for _, part := range parts {
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = part, offset
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// commitOffsets sends a TxnOffsetCommit and returns its partition codes.
func (p *txnProducer) commitOffsets(version int16, group, member string, gen int32, topic string, offset int64, parts ...int32) []int16 {
	p.t.Helper()
	resp := roundTrip[*kmsg.TxnOffsetCommitResponse](p.c, p.txnCommitReq(version, group, member, gen, topic, offset, parts...))
	var out []int16
	for _, t := range resp.Topics {
		for _, sp := range t.Partitions {
			out = append(out, sp.ErrorCode)
		}
	}
	return out
}

// end sends EndTxn at version.
func (p *txnProducer) end(version int16, commit bool) int16 {
	p.t.Helper()
	req := kmsg.NewPtrEndTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = version, p.id, p.pid, p.epoch, commit
	return roundTrip[*kmsg.EndTxnResponse](p.c, req).ErrorCode
}

// finish ends the transaction and waits until the coordinator completed
// it (markers written, offsets completed).
func (p *txnProducer) finish(commit bool) {
	p.t.Helper()
	wantCode(p.t, "EndTxn", p.end(3, commit), 0)
	want := "CompleteAbort"
	if commit {
		want = "CompleteCommit"
	}
	var got string
	testwait.Until(p.t, ioBound, func() bool {
		got = describeTxn(p.t, p.c, p.id).State
		return got == want
	}, "transaction %s: state %s, want %s", p.id, testwait.Later(func() string { return got }), want)
}

// describeTxn describes one transactional id.
func describeTxn(t *testing.T, c *rawClient, id string) kmsg.DescribeTransactionsResponseTransactionState {
	t.Helper()
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{id}
	resp := roundTrip[*kmsg.DescribeTransactionsResponse](c, req)
	if len(resp.TransactionStates) != 1 {
		t.Fatalf("DescribeTransactions answered %d ids", len(resp.TransactionStates))
	}
	return resp.TransactionStates[0]
}

// fetchIsolated fetches one partition from offset at an isolation level.
func (c *rawClient) fetchIsolated(topic string, part int32, offset int64, isolation int8) kmsg.FetchResponseTopicPartition {
	c.t.Helper()
	req := fetchReq(11, topic, [16]byte{}, part, offset)
	req.IsolationLevel = isolation
	sp := c.fetchOne(req)
	wantCode(c.t, "fetch", sp.ErrorCode, 0)
	return sp
}

// fetchedBatches describes fetched batches as "offset:kind" (kind "d" for
// data, "t" for transactional data, "C"/"A" for commit/abort markers), and
// the aborted transactions as "pid@first".
func fetchedBatches(t *testing.T, sp kmsg.FetchResponseTopicPartition) (batches, aborted string) {
	t.Helper()
	var bs []string
	for _, raw := range splitFetched(t, sp.RecordBatches) {
		h := record.ReadHeader(raw)
		base := int64(binary.BigEndian.Uint64(raw))
		kind := "d"
		switch {
		case h.Attributes&attrControl != 0 && controlKind(raw) == 1:
			kind = "C"
		case h.Attributes&attrControl != 0:
			kind = "A"
		case h.Attributes&attrTransactional != 0:
			kind = "t"
		}
		bs = append(bs, fmt.Sprintf("%d:%s", base, kind))
	}
	var as []string
	for _, a := range sp.AbortedTransactions {
		as = append(as, fmt.Sprintf("%d@%d", a.ProducerID, a.FirstOffset))
	}
	if sp.AbortedTransactions == nil {
		as = []string{"null"}
	}
	return strings.Join(bs, ","), strings.Join(as, ",")
}

// controlKind returns a control batch's type from its (uncompressed)
// record's key: 0 abort, 1 commit.
func controlKind(raw []byte) int16 {
	recs := raw[record.BatchHeaderLen:]
	_, n := binary.Varint(recs) // record length
	recs = recs[n+1:]           // attributes
	_, n = binary.Varint(recs)  // timestamp delta
	recs = recs[n:]
	_, n = binary.Varint(recs) // offset delta
	recs = recs[n:]
	_, n = binary.Varint(recs) // key length
	recs = recs[n:]
	return int16(binary.BigEndian.Uint16(recs[2:])) // version, then type
}

// listLatest returns the latest offset of partition 0 of topic at an
// isolation level.
func listLatest(t *testing.T, c *rawClient, topic string, isolation int8) int64 {
	t.Helper()
	return listOffsetAt(t, c, topic, -1, isolation)
}

// listOffsetAt lists partition 0 of topic at a timestamp (or -1, -2…) at an
// isolation level.
func listOffsetAt(t *testing.T, c *rawClient, topic string, ts int64, isolation int8) int64 {
	t.Helper()
	req := listOffsetsReq(5, topic, []int64{ts})
	req.IsolationLevel = isolation
	resp := roundTrip[*kmsg.ListOffsetsResponse](c, req)
	sp := resp.Topics[0].Partitions[0]
	wantCode(t, "ListOffsets", sp.ErrorCode, 0)
	return sp.Offset
}

// fetchStable asks for committed offsets with require_stable and returns
// them as "offset" or the error name, per partition.
func fetchStable(t *testing.T, c *rawClient, group, topic string, parts ...int32) string {
	t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version, req.Group, req.RequireStable = 7, group, true
	req.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: topic, Partitions: parts}}
	resp := roundTrip[*kmsg.OffsetFetchResponse](c, req)
	wantCode(t, "offset fetch", resp.ErrorCode, 0)
	var out []string
	for _, p := range resp.Topics[0].Partitions {
		if p.ErrorCode != 0 {
			out = append(out, errName(p.ErrorCode))
			continue
		}
		out = append(out, fmt.Sprint(p.Offset))
	}
	return strings.Join(out, ",")
}

// waitLSO waits until a read_committed fetch of partition part from 0
// reports last stable offset lso, and leaves that answer in last.
func waitLSO(t *testing.T, c *rawClient, topic string, part int32, lso int64, last *kmsg.FetchResponseTopicPartition) {
	t.Helper()
	testwait.Until(t, ioBound, func() bool {
		*last = c.fetchIsolated(topic, part, 0, readCommitted)
		return last.LastStableOffset == lso
	}, "LSO of %s-%d is %s, want %d", topic, part, testwait.Later(func() string { return fmt.Sprint(last.LastStableOffset) }), lso)
}

// TestTxnCommit runs a whole transaction through the wire: init, add
// partitions, transactional produce, add offsets, offset commit in the
// transaction, commit; and checks what read_committed and read_uncommitted
// consumers, ListOffsets and OffsetFetch see before and after.
func TestTxnCommit(t *testing.T) {
	t.Parallel()
	b := startGroupBroker(t)
	b.createTopic("tx", 2, nil)
	c := b.dial()
	c.mustProduce("tx", 0, plainBatch(1, 4, 1).build(t)) // offset 0, outside any transaction

	p := newTxnProducer(t, b, "txn-commit")
	p.addPartitions("tx", 0, 1)
	if off := p.mustProduce("tx", 0, 2); off != 1 {
		t.Fatalf("transactional batch at %d, want 1", off)
	}
	p.mustProduce("tx", 1, 1)

	ru := c.fetchIsolated("tx", 0, 0, 0)
	if bs, ab := fetchedBatches(t, ru); bs != "0:d,1:t" || ab != "null" || ru.HighWatermark != 3 || ru.LastStableOffset != 1 {
		t.Fatalf("read_uncommitted during the transaction: %s aborted %s hw %d lso %d", bs, ab, ru.HighWatermark, ru.LastStableOffset)
	}
	rc := c.fetchIsolated("tx", 0, 0, readCommitted)
	if bs, ab := fetchedBatches(t, rc); bs != "0:d" || ab != "" || rc.HighWatermark != 3 || rc.LastStableOffset != 1 {
		t.Fatalf("read_committed during the transaction: %s aborted %q hw %d lso %d", bs, ab, rc.HighWatermark, rc.LastStableOffset)
	}
	if lso, hw := listLatest(t, c, "tx", readCommitted), listLatest(t, c, "tx", 0); lso != 1 || hw != 3 {
		t.Fatalf("ListOffsets latest: read_committed %d (want 1), read_uncommitted %d (want 3)", lso, hw)
	}
	const txnTS = 1_700_000_000_000 // the transactional records' first timestamp
	if rc, ru := listOffsetAt(t, c, "tx", txnTS, readCommitted), listOffsetAt(t, c, "tx", txnTS, 0); rc != -1 || ru != 1 {
		t.Fatalf("ListOffsets by timestamp: read_committed %d (want -1), read_uncommitted %d (want 1)", rc, ru)
	}
	if rc := listOffsetAt(t, c, "tx", -2, readCommitted); rc != 0 {
		t.Fatalf("ListOffsets earliest read_committed: %d", rc)
	}

	wantCode(t, "AddOffsetsToTxn", p.addOffsets(3, "g"), 0)
	wantCodes(t, "TxnOffsetCommit", p.commitOffsets(3, "g", "", -1, "tx", 5, 0, 1), 0)
	if got := fetchStable(t, c, "g", "tx", 0, 1); got != "UNSTABLE_OFFSET_COMMIT,UNSTABLE_OFFSET_COMMIT" {
		t.Fatalf("require_stable with offsets pending: %s", got)
	}
	if got := fetchOffsets(t, c, "g", "tx", 0, 1); got != "-1/,-1/" {
		t.Fatalf("offsets visible before the commit: %s", got)
	}

	p.finish(true)
	var last kmsg.FetchResponseTopicPartition
	testwait.Until(t, ioBound, func() bool {
		last = c.fetchIsolated("tx", 0, 0, readCommitted)
		return last.LastStableOffset == 4
	}, "LSO %s after the commit, want 4", testwait.Later(func() string { return fmt.Sprint(last.LastStableOffset) }))
	if bs, ab := fetchedBatches(t, last); bs != "0:d,1:t,3:C" || ab != "" || last.HighWatermark != 4 {
		t.Fatalf("read_committed after the commit: %s aborted %q hw %d", bs, ab, last.HighWatermark)
	}
	if got := fetchStable(t, c, "g", "tx", 0, 1); got != "5,5" {
		t.Fatalf("committed offsets after the commit: %s", got)
	}
	if lso, at := listLatest(t, c, "tx", readCommitted), listOffsetAt(t, c, "tx", txnTS, readCommitted); lso != 4 || at != 1 {
		t.Fatalf("ListOffsets read_committed after the commit: latest %d (want 4), by timestamp %d (want 1)", lso, at)
	}
}

// TestTxnLongPollWakesOnLSO: a read_committed long poll waiting at the LSO
// answers when the transaction commits, which moves the LSO without adding
// data below the high watermark it waited on.
func TestTxnLongPollWakesOnLSO(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("tx", 1, nil)
	p := newTxnProducer(t, b, "long-poll")
	p.addPartitions("tx", 0)
	p.mustProduce("tx", 0, 3)
	req := fetchReq(11, "tx", [16]byte{}, 0, 0)
	req.IsolationLevel, req.MaxWaitMillis, req.MinBytes = readCommitted, int32(ioBound.Milliseconds()), 1
	answer := b.goRoundTrip(req)
	p.finish(true)
	sp := await[*kmsg.FetchResponse](t, answer).Topics[0].Partitions[0]
	if bs, _ := fetchedBatches(t, sp); !strings.HasPrefix(bs, "0:t") {
		t.Fatalf("long poll answered %s (lso %d, hw %d), want the committed batch", bs, sp.LastStableOffset, sp.HighWatermark)
	}
}

// TestTxnAbort: an aborted transaction's batches are returned with the
// abort marker and listed in AbortedTransactions, and its offsets never
// become visible.
func TestTxnAbort(t *testing.T) {
	t.Parallel()
	b := startGroupBroker(t)
	b.createTopic("tx", 1, nil)
	c := b.dial()
	p := newTxnProducer(t, b, "txn-abort")
	p.addPartitions("tx", 0)
	p.mustProduce("tx", 0, 2)
	wantCode(t, "AddOffsetsToTxn", p.addOffsets(3, "g"), 0)
	wantCodes(t, "TxnOffsetCommit", p.commitOffsets(3, "g", "", -1, "tx", 7, 0), 0)
	c.mustProduce("tx", 0, plainBatch(1, 4, 1).build(t)) // offset 2, beside the transaction at 0-1
	if rc := c.fetchIsolated("tx", 0, 0, readCommitted); rc.LastStableOffset != 0 || len(rc.RecordBatches) != 0 {
		t.Fatalf("read_committed with an open transaction at 0: lso %d, %d bytes", rc.LastStableOffset, len(rc.RecordBatches))
	}

	p.finish(false)
	var last kmsg.FetchResponseTopicPartition
	testwait.Until(t, ioBound, func() bool {
		last = c.fetchIsolated("tx", 0, 0, readCommitted)
		return last.LastStableOffset == 4
	}, "LSO %s after the abort, want 4", testwait.Later(func() string { return fmt.Sprint(last.LastStableOffset) }))
	if bs, ab := fetchedBatches(t, last); bs != "0:t,2:d,3:A" || ab != fmt.Sprintf("%d@0", p.pid) {
		t.Fatalf("read_committed after the abort: %s aborted %s", bs, ab)
	}
	if got := fetchStable(t, c, "g", "tx", 0); got != "-1" {
		t.Fatalf("offsets of an aborted transaction: %s", got)
	}
	// The producer goes on with a new transaction at the same epoch.
	p.addPartitions("tx", 0)
	p.mustProduce("tx", 0, 1)
	p.finish(true)
	testwait.Until(t, ioBound, func() bool {
		last = c.fetchIsolated("tx", 0, 0, readCommitted)
		return last.LastStableOffset == 6
	}, "LSO %s after the second transaction, want 6", testwait.Later(func() string { return fmt.Sprint(last.LastStableOffset) }))
	if bs, ab := fetchedBatches(t, last); bs != "0:t,2:d,3:A,4:t,5:C" || ab != fmt.Sprintf("%d@0", p.pid) {
		t.Fatalf("read_committed after abort then commit: %s aborted %s", bs, ab)
	}
}

// TestTxnAdminAPIs: DescribeTransactions, ListTransactions and
// DescribeProducers during an open transaction.
func TestTxnAdminAPIs(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("tx", 2, nil)
	c := b.dial()
	p := newTxnProducer(t, b, "txn-admin")
	p.addPartitions("tx", 1)
	off := p.mustProduce("tx", 1, 1)

	d := describeTxn(t, c, "txn-admin")
	wantCode(t, "describe", d.ErrorCode, 0)
	if d.State != "Ongoing" || d.ProducerID != p.pid || d.ProducerEpoch != p.epoch || d.StartTimestamp <= 0 ||
		len(d.Topics) != 1 || d.Topics[0].Topic != "tx" || !slices.Equal(d.Topics[0].Partitions, []int32{1}) {
		t.Fatalf("describe: %+v", d)
	}
	wantCode(t, "describe an unknown id", describeTxn(t, c, "nobody").ErrorCode, kerr.TransactionalIDNotFound.Code)

	list := func(version int16, states []string, pids []int64, duration int64) *kmsg.ListTransactionsResponse {
		req := kmsg.NewPtrListTransactionsRequest()
		req.Version, req.StateFilters, req.ProducerIDFilters, req.DurationFilterMillis = version, states, pids, duration
		resp := roundTrip[*kmsg.ListTransactionsResponse](c, req)
		wantCode(t, "ListTransactions", resp.ErrorCode, 0)
		return resp
	}
	ids := func(resp *kmsg.ListTransactionsResponse) string {
		var out []string
		for _, s := range resp.TransactionStates {
			out = append(out, s.TransactionalID+"/"+s.TransactionState)
		}
		return strings.Join(out, ",")
	}
	if got := ids(list(0, nil, nil, -1)); got != "txn-admin/Ongoing" {
		t.Fatalf("list all: %s", got)
	}
	if got := ids(list(0, []string{"Ongoing"}, []int64{p.pid}, -1)); got != "txn-admin/Ongoing" {
		t.Fatalf("list by state and producer: %s", got)
	}
	if got := ids(list(0, nil, []int64{p.pid + 1}, -1)); got != "" {
		t.Fatalf("list another producer: %s", got)
	}
	if resp := list(1, []string{"Bogus"}, nil, -1); ids(resp) != "" || !slices.Equal(resp.UnknownStateFilters, []string{"Bogus"}) {
		t.Fatalf("list an unknown state: %s, unknown %v", ids(resp), resp.UnknownStateFilters)
	}
	if got := ids(list(1, nil, nil, 3_600_000)); got != "" {
		t.Fatalf("list transactions older than an hour: %s", got)
	}

	req := kmsg.NewPtrDescribeProducersRequest()
	req.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: "tx", Partitions: []int32{1, 0, 9}}, {Topic: "nope", Partitions: []int32{0}}}
	resp := roundTrip[*kmsg.DescribeProducersResponse](c, req)
	parts := resp.Topics[0].Partitions
	wantCode(t, "producers of tx-1", parts[0].ErrorCode, 0)
	if len(parts[0].ActiveProducers) != 1 {
		t.Fatalf("producers of tx-1: %+v", parts[0].ActiveProducers)
	}
	if ap := parts[0].ActiveProducers[0]; ap.ProducerID != p.pid || ap.ProducerEpoch != int32(p.epoch) || ap.CurrentTxnStartOffset != off || ap.LastSequence != 0 {
		t.Fatalf("producer of tx-1: %+v", ap)
	}
	wantCode(t, "producers of tx-0", parts[1].ErrorCode, 0)
	if len(parts[1].ActiveProducers) != 0 {
		t.Fatalf("producers of tx-0: %+v", parts[1].ActiveProducers)
	}
	wantCode(t, "producers of tx-9", parts[2].ErrorCode, kerr.UnknownTopicOrPartition.Code)
	wantCode(t, "producers of nope-0", resp.Topics[1].Partitions[0].ErrorCode, kerr.UnknownTopicOrPartition.Code)
}
