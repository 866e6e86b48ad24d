package protocol

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// hwOf returns a partition's high watermark.
func (b *testBroker) hwOf(topic string, part int32) int64 {
	b.t.Helper()
	t, ok := b.log.Topic(topic)
	if !ok || t.Partition(part) == nil {
		b.t.Fatalf("no partition %s-%d", topic, part)
	}
	_, hw := t.Partition(part).Offsets()
	return hw
}

// TestTxnBadInput: the bad input, each answered with Kafka's code
// and leaving the partition's data and the committed offsets unchanged.
func TestTxnBadInput(t *testing.T) {
	t.Parallel()
	b := startGroupBroker(t)
	b.createTopic("tx", 2, nil)
	c := b.dial()

	t.Run("unknown producer", func(t *testing.T) {
		p := &txnProducer{t: t, c: c, id: "never-initialized", pid: 4242, epoch: 0, seq: map[string]int32{}}
		wantCodes(t, "AddPartitionsToTxn", p.addPartitionsCodes(3, "tx", 0), kerr.InvalidProducerIDMapping.Code)
		wantCode(t, "transactional produce", p.produce("tx", 0, 1).ErrorCode, kerr.InvalidProducerIDMapping.Code)
		wantCode(t, "EndTxn", p.end(3, true), kerr.InvalidProducerIDMapping.Code)
	})
	t.Run("partition not in the transaction", func(t *testing.T) {
		p := newTxnProducer(t, b, "not-added")
		p.addPartitions("tx", 0)
		sp := p.produce("tx", 1, 1)
		wantCode(t, "produce to a partition not added", sp.ErrorCode, kerr.InvalidTxnState.Code)
		p.mustProduce("tx", 0, 1)
		p.finish(false)
	})
	t.Run("non-transactional batch during an open transaction", func(t *testing.T) {
		p := newTxnProducer(t, b, "mixed")
		p.addPartitions("tx", 1)
		p.mustProduce("tx", 1, 1)
		idem := plainBatch(1, 8, 1)
		idem.producerID, idem.epoch, idem.seq = p.pid, p.epoch, 1
		before := b.hwOf("tx", 1)
		wantCode(t, "idempotent batch of the transaction's producer", c.produce("tx", 1, idem.build(t)).ErrorCode, kerr.InvalidTxnState.Code)
		if hw := b.hwOf("tx", 1); hw != before {
			t.Fatalf("refused batch written: high watermark %d, was %d", hw, before)
		}
		p.finish(true)
	})
	t.Run("EndTxn in the wrong state", func(t *testing.T) {
		p := newTxnProducer(t, b, "wrong-state")
		wantCode(t, "commit with no transaction", p.end(3, true), kerr.InvalidTxnState.Code)
		p.addPartitions("tx", 0)
		p.mustProduce("tx", 0, 1)
		p.finish(true)
		wantCode(t, "abort after the commit", p.end(3, false), kerr.InvalidTxnState.Code)
	})
	t.Run("client control batch", func(t *testing.T) {
		p := newTxnProducer(t, b, "control")
		p.addPartitions("tx", 0)
		s := plainBatch(1, 8, 1)
		s.producerID, s.epoch, s.seq, s.transactional, s.control = p.pid, p.epoch, 0, true, true
		req := produceReq(9, -1, "tx", 0, s.build(t))
		req.TransactionID = &p.id
		before := b.hwOf("tx", 0)
		wantCode(t, "control batch", roundTrip[*kmsg.ProduceResponse](c, req).Topics[0].Partitions[0].ErrorCode, kerr.InvalidRecord.Code)
		if hw := b.hwOf("tx", 0); hw != before {
			t.Fatalf("control batch written: high watermark %d, was %d", hw, before)
		}
		p.finish(false)
	})
	t.Run("stale generation", func(t *testing.T) {
		m := joinAlone(t, c, "eos-group", nil, "tx")
		p := newTxnProducer(t, b, "stale-gen")
		wantCode(t, "AddOffsetsToTxn", p.addOffsets(3, "eos-group"), 0)
		for _, tc := range []struct {
			member string
			gen    int32
			want   int16
		}{
			{m.id, m.gen + 1, kerr.IllegalGeneration.Code},
			{"someone-else", m.gen, kerr.UnknownMemberID.Code},
		} {
			wantCodes(t, fmt.Sprintf("TxnOffsetCommit as %s gen %d", tc.member, tc.gen),
				p.commitOffsets(3, "eos-group", tc.member, tc.gen, "tx", 9, 0), tc.want)
		}
		// Verified first (the group must be in the transaction), then
		// checked as an OffsetCommit is.
		wantCodes(t, "TxnOffsetCommit to a group not in the transaction", p.commitOffsets(3, "no-such-group", "m", 1, "tx", 9, 0), kerr.InvalidTxnState.Code)
		wantCode(t, "AddOffsetsToTxn", p.addOffsets(3, "no-such-group"), 0)
		wantCodes(t, "TxnOffsetCommit with a generation to a group that does not exist",
			p.commitOffsets(3, "no-such-group", "m", 1, "tx", 9, 0), kerr.IllegalGeneration.Code)
		wantCodes(t, "TxnOffsetCommit to an unknown partition", p.commitOffsets(3, "eos-group", m.id, m.gen, "tx", 9, 5), kerr.UnknownTopicOrPartition.Code)
		wantCodes(t, "TxnOffsetCommit to an empty group id", p.commitOffsets(3, "", "", -1, "tx", 9, 0), kerr.InvalidGroupID.Code)
		p.finish(true)
		if got := fetchStable(t, c, "eos-group", "tx", 0); got != "-1" {
			t.Fatalf("offsets after refused commits: %s", got)
		}
		// The member's own generation commits.
		p.addPartitions("tx", 0)
		wantCode(t, "AddOffsetsToTxn", p.addOffsets(3, "eos-group"), 0)
		wantCodes(t, "TxnOffsetCommit", p.commitOffsets(3, "eos-group", m.id, m.gen, "tx", 9, 0), 0)
		p.finish(true)
		if got := fetchStable(t, c, "eos-group", "tx", 0); got != "9" {
			t.Fatalf("offsets after the member's commit: %s", got)
		}
	})
}

// TestTxnFencedCodes: a zombie (the same transactional id, an older epoch)
// is PRODUCER_FENCED from the versions that know that code, and
// INVALID_PRODUCER_EPOCH before them, as Kafka's KafkaApis answers; its
// writes after the fence are refused and nothing of its open transaction
// becomes visible.
func TestTxnFencedCodes(t *testing.T) {
	t.Parallel()
	b := startGroupBroker(t)
	b.createTopic("tx", 1, nil)
	c := b.dial()
	zombie := newTxnProducer(t, b, "zombie")
	zombie.addPartitions("tx", 0)
	zombie.mustProduce("tx", 0, 2)
	// The new session fences the zombie: as in Kafka, the epoch is bumped
	// once to abort the zombie's transaction, and again for the session.
	fresh := newTxnProducer(t, b, "zombie")
	if fresh.pid != zombie.pid || fresh.epoch != zombie.epoch+2 {
		t.Fatalf("new session: producer %d epoch %d, zombie was %d epoch %d", fresh.pid, fresh.epoch, zombie.pid, zombie.epoch)
	}

	for _, tc := range []struct {
		api     string
		version int16
		want    int16
	}{
		{"AddPartitionsToTxn", 1, kerr.InvalidProducerEpoch.Code},
		{"AddPartitionsToTxn", 2, kerr.ProducerFenced.Code},
		{"AddPartitionsToTxn", 3, kerr.ProducerFenced.Code},
		{"AddOffsetsToTxn", 1, kerr.InvalidProducerEpoch.Code},
		{"AddOffsetsToTxn", 2, kerr.ProducerFenced.Code},
		{"EndTxn", 0, kerr.InvalidProducerEpoch.Code},
		{"EndTxn", 1, kerr.InvalidProducerEpoch.Code},
		{"EndTxn", 2, kerr.ProducerFenced.Code},
		{"EndTxn", 4, kerr.ProducerFenced.Code},
	} {
		var got int16
		switch tc.api {
		case "AddPartitionsToTxn":
			codes := zombie.addPartitionsCodes(tc.version, "tx", 0)
			wantCodes(t, "AddPartitionsToTxn", codes, codes[0])
			got = codes[0]
		case "AddOffsetsToTxn":
			got = zombie.addOffsets(tc.version, "g")
		case "EndTxn":
			got = zombie.end(tc.version, true)
		}
		wantCode(t, fmt.Sprintf("%s v%d from the zombie", tc.api, tc.version), got, tc.want)
	}
	// KIP-360: an InitProducerId naming a producer id the transactional id
	// never had is fenced.
	for _, tc := range []struct {
		version int16
		want    int16
	}{{3, kerr.InvalidProducerEpoch.Code}, {4, kerr.ProducerFenced.Code}} {
		resp := roundTrip[*kmsg.InitProducerIDResponse](c, initTxnReq(tc.version, "zombie", fresh.pid+1000, 0))
		wantCode(t, fmt.Sprintf("InitProducerId v%d with another producer id", tc.version), resp.ErrorCode, tc.want)
	}
	// The zombie's TxnOffsetCommit is INVALID_PRODUCER_EPOCH at every
	// version: as in Kafka, its verification with the transaction
	// coordinator finds it fenced (and the group, which saw the new
	// epoch, would refuse it with that code too).
	wantCode(t, "AddOffsetsToTxn", fresh.addOffsets(3, "fenced-group"), 0)
	wantCodes(t, "TxnOffsetCommit", fresh.commitOffsets(3, "fenced-group", "", -1, "tx", 1, 0), 0)
	fresh.finish(true)
	for _, v := range []int16{0, 2, 3, 4} {
		wantCodes(t, fmt.Sprintf("zombie TxnOffsetCommit v%d", v), zombie.commitOffsets(v, "fenced-group", "", -1, "tx", 2, 0), kerr.InvalidProducerEpoch.Code)
	}
	if got := fetchStable(t, c, "fenced-group", "tx", 0); got != "1" {
		t.Fatalf("offsets after the zombie's commits: %s", got)
	}
	// The zombie's produce is refused, and its transaction was aborted.
	hw := b.hwOf("tx", 0)
	wantCode(t, "zombie produce", zombie.produce("tx", 0, 1).ErrorCode, kerr.InvalidProducerEpoch.Code)
	var rc kmsg.FetchResponseTopicPartition
	waitLSO(t, c, "tx", 0, hw, &rc)
	if bs, ab := fetchedBatches(t, rc); bs != "0:t,2:A" || ab != fmt.Sprintf("%d@0", zombie.pid) {
		t.Fatalf("read_committed after the fence: %s aborted %s", bs, ab)
	}
	if got := b.hwOf("tx", 0); got != hw {
		t.Fatalf("zombie produce written: high watermark %d, was %d", got, hw)
	}
}
