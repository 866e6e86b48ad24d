package protocol

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/metadata"
)

// TestAddPartitionsToTxnVersions: one unknown partition fails a client's
// whole request (OPERATION_NOT_ATTEMPTED for the others); v4 batches
// transactions and verifies without adding (KIP-890 part 1).
func TestAddPartitionsToTxnVersions(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("tx", 2, nil)
	p := newTxnProducer(t, b, "adder")
	req := p.addPartitionsReq(3, "tx", 0, 7)
	req.Topics = append(req.Topics, kmsg.AddPartitionsToTxnRequestTopic{Topic: "nope", Partitions: []int32{0}})
	resp := roundTrip[*kmsg.AddPartitionsToTxnResponse](p.c, req)
	if got := addPartitionsAnswer(resp.Topics[0].Topic, resp.Topics[0].Partitions) + " " + addPartitionsAnswer(resp.Topics[1].Topic, resp.Topics[1].Partitions); got !=
		"tx/0=OPERATION_NOT_ATTEMPTED,tx/7=UNKNOWN_TOPIC_OR_PARTITION nope/0=UNKNOWN_TOPIC_OR_PARTITION" {
		t.Fatalf("request with unknown partitions: %s", got)
	}
	p.addPartitions("tx", 0)

	batch := func(id string, pid int64, verify bool, parts ...int32) kmsg.AddPartitionsToTxnRequestTransaction {
		return kmsg.AddPartitionsToTxnRequestTransaction{TransactionalID: id, ProducerID: pid, ProducerEpoch: p.epoch, VerifyOnly: verify,
			Topics: []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: "tx", Partitions: parts}}}
	}
	v4 := func(txns ...kmsg.AddPartitionsToTxnRequestTransaction) string {
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.Version, req.Transactions = 4, txns
		resp := roundTrip[*kmsg.AddPartitionsToTxnResponse](p.c, req)
		wantCode(t, "v4 top level", resp.ErrorCode, 0)
		var out []string
		for _, tr := range resp.Transactions {
			var topics []string
			for _, tt := range tr.Topics {
				parts := make([]kmsg.AddPartitionsToTxnResponseTopicPartition, len(tt.Partitions))
				for i, sp := range tt.Partitions {
					parts[i] = kmsg.AddPartitionsToTxnResponseTopicPartition{Partition: sp.Partition, ErrorCode: sp.ErrorCode}
				}
				topics = append(topics, addPartitionsAnswer(tt.Topic, parts))
			}
			out = append(out, tr.TransactionalID+":"+strings.Join(topics, " "))
		}
		return strings.Join(out, " ")
	}
	if got := v4(batch("adder", p.pid, true, 0, 1), batch("nobody", 99, true, 0)); got !=
		"adder:tx/0=NONE,tx/1=INVALID_TXN_STATE nobody:tx/0=INVALID_PRODUCER_ID_MAPPING" {
		t.Fatalf("v4 verification: %s", got)
	}
	if got := v4(batch("adder", p.pid, false, 1)); got != "adder:tx/1=NONE" {
		t.Fatalf("v4 add: %s", got)
	}
	if got := v4(batch("adder", p.pid, true, 1)); got != "adder:tx/1=NONE" {
		t.Fatalf("v4 verification after the add: %s", got)
	}
}

// addPartitionsAnswer formats one topic's partition codes.
func addPartitionsAnswer(topic string, parts []kmsg.AddPartitionsToTxnResponseTopicPartition) string {
	var out []string
	for _, sp := range parts {
		out = append(out, fmt.Sprintf("%s/%d=%s", topic, sp.Partition, errName(sp.ErrorCode)))
	}
	return strings.Join(out, ",")
}

// TestWriteTxnMarkers: an operator aborts a hanging transaction with
// WriteTxnMarkers (as kafka-transactions.sh abort does), with the
// coordinator epoch DescribeProducers gives: the partition's LSO moves on
// and the group shard's pending offsets are dropped. Partitions that do not
// exist, shards out of range and markers older than the producer are
// refused per partition.
func TestWriteTxnMarkers(t *testing.T) {
	t.Parallel()
	b := startGroupBroker(t)
	b.createTopic("tx", 1, nil)
	c := b.dial()
	newTxnProducer(t, b, "hanging")
	p := newTxnProducer(t, b, "hanging") // epoch 1, so that a marker can be older
	p.addPartitions("tx", 0)
	p.mustProduce("tx", 0, 2)
	wantCode(t, "AddOffsetsToTxn", p.addOffsets(3, "hanging-group"), 0)
	wantCodes(t, "TxnOffsetCommit", p.commitOffsets(3, "hanging-group", "", -1, "tx", 2, 0), 0)

	dp := kmsg.NewPtrDescribeProducersRequest()
	dp.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: "tx", Partitions: []int32{0}}}
	prods := roundTrip[*kmsg.DescribeProducersResponse](c, dp).Topics[0].Partitions[0].ActiveProducers
	if len(prods) != 1 || prods[0].CurrentTxnStartOffset != 0 {
		t.Fatalf("producers of tx-0: %+v", prods)
	}
	shard := metadata.GroupShard("hanging-group")
	markers := func(epoch int16, topics ...kmsg.WriteTxnMarkersRequestMarkerTopic) string {
		req := kmsg.NewPtrWriteTxnMarkersRequest()
		req.Version = 1
		req.Markers = []kmsg.WriteTxnMarkersRequestMarker{{ProducerID: p.pid, ProducerEpoch: epoch, Committed: false,
			CoordinatorEpoch: prods[0].CoordinatorEpoch, Topics: topics}}
		resp := roundTrip[*kmsg.WriteTxnMarkersResponse](c, req)
		var out []string
		for _, m := range resp.Markers {
			if m.ProducerID != p.pid {
				t.Fatalf("marker answer for producer %d, sent %d", m.ProducerID, p.pid)
			}
			for _, mt := range m.Topics {
				for _, mp := range mt.Partitions {
					out = append(out, fmt.Sprintf("%s/%d=%s", mt.Topic, mp.Partition, errName(mp.ErrorCode)))
				}
			}
		}
		return strings.Join(out, ",")
	}
	if got := markers(p.epoch-1, kmsg.WriteTxnMarkersRequestMarkerTopic{Topic: "tx", Partitions: []int32{0}}); got != "tx/0=INVALID_PRODUCER_EPOCH" {
		t.Fatalf("marker older than the producer: %s", got)
	}
	got := markers(p.epoch, kmsg.WriteTxnMarkersRequestMarkerTopic{Topic: "tx", Partitions: []int32{0, 3}},
		kmsg.WriteTxnMarkersRequestMarkerTopic{Topic: "nope", Partitions: []int32{0}},
		kmsg.WriteTxnMarkersRequestMarkerTopic{Topic: groupOffsetsTopic, Partitions: []int32{shard, 64}})
	want := fmt.Sprintf("tx/0=NONE,tx/3=UNKNOWN_TOPIC_OR_PARTITION,nope/0=UNKNOWN_TOPIC_OR_PARTITION,%s/%d=NONE,%s/64=UNKNOWN_TOPIC_OR_PARTITION",
		groupOffsetsTopic, shard, groupOffsetsTopic)
	if got != want {
		t.Fatalf("operator abort: %s, want %s", got, want)
	}
	var rc kmsg.FetchResponseTopicPartition
	waitLSO(t, c, "tx", 0, 3, &rc)
	if bs, ab := fetchedBatches(t, rc); bs != "0:t,2:A" || ab != fmt.Sprintf("%d@0", p.pid) {
		t.Fatalf("read_committed after the operator's abort: %s aborted %s", bs, ab)
	}
	if got := fetchStable(t, c, "hanging-group", "tx", 0); got != "-1" {
		t.Fatalf("offsets after the operator's abort: %s", got)
	}
	wantCode(t, "the producer's own abort after the operator's", p.end(3, false), 0)
}
