package protocol

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestProduceErrors(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("p", 2, nil)
	c := b.dial()
	good := func() []byte { return plainBatch(2, 20, 1000).build(t) }
	badCRC := good()
	badCRC[len(badCRC)-1] ^= 0xff
	badMagic := good()
	badMagic[16] = 1
	tinySize := good()
	tinySize[8], tinySize[9], tinySize[10], tinySize[11] = 0, 0, 0, 5
	cases := []struct {
		name    string
		version int16
		acks    int16
		topic   string
		part    int32
		records []byte
		code    int16
	}{
		{"acks=1", 9, 1, "p", 0, good(), 0},
		{"acks=-1 v3", 3, -1, "p", 1, good(), 0},
		{"acks=2", 9, 2, "p", 0, good(), kerr.InvalidRequiredAcks.Code},
		{"acks=-2", 9, -2, "p", 0, good(), kerr.InvalidRequiredAcks.Code},
		{"unknown topic", 9, -1, "nope", 0, good(), kerr.UnknownTopicOrPartition.Code},
		{"unknown partition", 9, -1, "p", 2, good(), kerr.UnknownTopicOrPartition.Code},
		{"negative partition", 9, -1, "p", -1, good(), kerr.UnknownTopicOrPartition.Code},
		{"two batches", 9, -1, "p", 0, append(good(), good()...), kerr.InvalidRecord.Code},
		{"bad CRC", 9, -1, "p", 0, badCRC, kerr.CorruptMessage.Code},
		{"magic 1", 9, -1, "p", 0, badMagic, kerr.InvalidRecord.Code},
		{"truncated batch", 9, -1, "p", 0, good()[:70], kerr.InvalidRecord.Code},
		{"shorter than a batch header", 9, -1, "p", 0, good()[:11], kerr.InvalidRecord.Code},
		{"size field below a record", 9, -1, "p", 0, tinySize, kerr.CorruptMessage.Code},
		{"no records", 9, -1, "p", 0, nil, kerr.InvalidRecord.Code},
	}
	for _, tc := range cases {
		resp := roundTrip[*kmsg.ProduceResponse](c, produceReq(tc.version, tc.acks, tc.topic, tc.part, tc.records))
		p := resp.Topics[0].Partitions[0]
		wantCode(t, tc.name, p.ErrorCode, tc.code)
		if tc.code != 0 && p.BaseOffset != -1 {
			t.Errorf("%s: base offset %d on error", tc.name, p.BaseOffset)
		}
		if resp.Topics[0].Topic != tc.topic || p.Partition != tc.part {
			t.Errorf("%s: answered for %s/%d", tc.name, resp.Topics[0].Topic, p.Partition)
		}
	}
	// Only the two good batches landed: offsets 0-1 in each partition.
	for part := int32(0); part < 2; part++ {
		if got := c.mustProduce("p", part, good()); got != 2 {
			t.Errorf("partition %d: next base offset %d, want 2", part, got)
		}
	}
}

// TestProducePartitionsAreIndependent: one partition's failure is its own
// error code; the others in the same request are appended.
func TestProducePartitionsAreIndependent(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("multi", 3, nil)
	c := b.dial()
	bad := plainBatch(1, 10, 1).build(t)
	bad[30] ^= 1
	req := produceReq(9, -1, "multi", 0, plainBatch(1, 10, 1).build(t))
	req.Topics[0].Partitions = append(req.Topics[0].Partitions,
		kmsg.ProduceRequestTopicPartition{Partition: 1, Records: bad},
		kmsg.ProduceRequestTopicPartition{Partition: 2, Records: plainBatch(3, 10, 1).build(t)},
		kmsg.ProduceRequestTopicPartition{Partition: 7, Records: plainBatch(1, 10, 1).build(t)})
	other := kmsg.NewProduceRequestTopic()
	other.Topic = "missing"
	other.Partitions = []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: plainBatch(1, 10, 1).build(t)}}
	req.Topics = append(req.Topics, other)
	resp := roundTrip[*kmsg.ProduceResponse](c, req)
	want := []int16{0, kerr.CorruptMessage.Code, 0, kerr.UnknownTopicOrPartition.Code}
	for i, p := range resp.Topics[0].Partitions {
		wantCode(t, "partition", p.ErrorCode, want[i])
	}
	wantCode(t, "other topic", resp.Topics[1].Partitions[0].ErrorCode, kerr.UnknownTopicOrPartition.Code)
	lo := roundTrip[*kmsg.ListOffsetsResponse](c, listOffsetsReq(5, "multi", []int64{-1, -1, -1}))
	for i, want := range []int64{1, 0, 3} {
		if got := lo.Topics[0].Partitions[i].Offset; got != want {
			t.Errorf("partition %d end offset %d, want %d", i, got, want)
		}
	}
}

func TestProduceByTopicID(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	topic := b.createTopic("ids", 1, nil)
	c := b.dial()
	for _, tc := range []struct {
		id   [16]byte
		code int16
	}{{topic.ID, 0}, {[16]byte{9}, kerr.UnknownTopicID.Code}} {
		req := produceReq(13, -1, "", 0, plainBatch(1, 10, 1).build(t))
		req.Topics[0].TopicID = tc.id
		resp := roundTrip[*kmsg.ProduceResponse](c, req)
		wantCode(t, "v13 produce", resp.Topics[0].Partitions[0].ErrorCode, tc.code)
		if resp.Topics[0].TopicID != tc.id {
			t.Errorf("answered for topic id %x", resp.Topics[0].TopicID)
		}
	}
}

// TestProduceAcksZero: acks=0 gets no response, and the requests after it
// are still answered, in order.
func TestProduceAcksZero(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("fire", 1, nil)
	c := b.dial()
	for i := range 3 {
		c.send(produceReq(int16(3+3*i), 0, "fire", 0, plainBatch(2, 10, 1).build(t)))
	}
	md := metadataReq(1, false, "fire")
	resp := c.recv(md, c.send(md)).(*kmsg.MetadataResponse)
	wantCode(t, "metadata after acks=0", resp.Topics[0].ErrorCode, 0)
	lo := roundTrip[*kmsg.ListOffsetsResponse](c, listOffsetsReq(1, "fire", []int64{-1}))
	if got := lo.Topics[0].Partitions[0].Offset; got != 6 {
		t.Fatalf("end offset %d after three acks=0 batches of 2", got)
	}
}

// TestProduceAcksZeroErrorClosesConnection: Kafka cannot tell an acks=0
// producer that a batch failed, so it closes the connection (after answering
// what came before), which makes the client refresh its metadata.
func TestProduceAcksZeroErrorClosesConnection(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("fire", 1, nil)
	for _, bad := range []*kmsg.ProduceRequest{
		produceReq(9, 0, "no-such-topic", 0, plainBatch(1, 10, 1).build(t)),
		produceReq(9, 0, "fire", 0, append(plainBatch(1, 10, 1).build(t), 0)),
	} {
		c := b.dial()
		first := metadataReq(4, false, "fire")
		corr := c.send(first)
		c.send(bad)
		c.send(metadataReq(4, false, "fire"))
		c.recv(first, corr)
		c.expectClosed()
	}
	b.checkServing()
}

// TestProduceTransactionalChecks: the whole-request refusals of Kafka's
// KafkaApis and ReplicaManager (transactional records without a
// transactional id, or from two producers) and a client's control batch;
// a transactional id beside non-transactional records is fine.
func TestProduceTransactionalChecks(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	topic := b.createTopic("tx", 2, nil)
	c := b.dial()
	txnBatch := func(pid int64) []byte {
		s := plainBatch(1, 10, 1)
		s.producerID, s.epoch, s.seq, s.transactional = pid, 0, 0, true
		return s.build(t)
	}
	codes := func(req *kmsg.ProduceRequest) []int16 {
		var out []int16
		for _, rt := range roundTrip[*kmsg.ProduceResponse](c, req).Topics {
			for _, sp := range rt.Partitions {
				out = append(out, sp.ErrorCode)
			}
		}
		return out
	}

	// One transactional batch refuses the plain batch beside it too.
	req := produceReq(9, -1, "tx", 0, plainBatch(1, 10, 1).build(t))
	req.Topics[0].Partitions = append(req.Topics[0].Partitions, kmsg.ProduceRequestTopicPartition{Partition: 1, Records: txnBatch(7)})
	if got := codes(req); !slices.Equal(got, []int16{kerr.TransactionalIDAuthorizationFailed.Code, kerr.TransactionalIDAuthorizationFailed.Code}) {
		t.Fatalf("transactional records without a transactional id: %v", got)
	}
	req = produceReq(9, -1, "tx", 0, txnBatch(7))
	req.Topics[0].Partitions = append(req.Topics[0].Partitions, kmsg.ProduceRequestTopicPartition{Partition: 1, Records: txnBatch(8)})
	req.TransactionID = ptr("my-tx")
	if got := codes(req); !slices.Equal(got, []int16{kerr.InvalidProducerIDMapping.Code, kerr.InvalidProducerIDMapping.Code}) {
		t.Fatalf("transactional records of two producers: %v", got)
	}
	control := plainBatch(1, 10, 1)
	control.control = true
	wantCode(t, "control batch", c.produce("tx", 0, control.build(t)).ErrorCode, kerr.InvalidRecord.Code)
	control.producerID, control.epoch, control.seq, control.transactional = 7, 0, 0, true
	req = produceReq(9, -1, "tx", 0, control.build(t))
	req.TransactionID = ptr("my-tx")
	wantCodes(t, "transactional control batch", codes(req), kerr.InvalidRecord.Code)
	if _, hw := topic.Partition(0).Offsets(); hw != 0 {
		t.Fatalf("refused batches were written: high watermark %d", hw)
	}

	req = produceReq(9, -1, "tx", 0, plainBatch(1, 10, 1).build(t))
	req.TransactionID = ptr("my-tx")
	wantCodes(t, "a transactional id beside plain records", codes(req), 0)
}

// idempotentBatch is n records from producer pid at epoch with first
// sequence seq.
func idempotentBatch(t testing.TB, pid int64, epoch int16, seq int32, n int) []byte {
	s := plainBatch(n, 10, 1000)
	s.producerID, s.epoch, s.seq = pid, epoch, seq
	return s.build(t)
}

func TestProduceIdempotent(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("idem", 1, nil)
	c := b.dial()
	init := roundTrip[*kmsg.InitProducerIDResponse](c, initProducerIDReq(4, nil))
	wantCode(t, "InitProducerId", init.ErrorCode, 0)
	pid := init.ProducerID
	steps := []struct {
		name   string
		epoch  int16
		seq    int32
		n      int
		code   int16
		offset int64 // expected base offset when code is 0
	}{
		{"first", 0, 0, 3, 0, 0},
		{"next", 0, 3, 2, 0, 3},
		{"retry of first is a duplicate", 0, 0, 3, 0, 0},
		{"retry of last is a duplicate", 0, 3, 2, 0, 3},
		{"gap", 0, 10, 1, kerr.OutOfOrderSequenceNumber.Code, -1},
		{"continues", 0, 5, 1, 0, 5},
		{"new epoch must start at 0", 1, 6, 1, kerr.OutOfOrderSequenceNumber.Code, -1},
		{"new epoch", 1, 0, 2, 0, 6},
		{"old epoch", 0, 6, 1, kerr.InvalidProducerEpoch.Code, -1},
		{"new epoch continues", 1, 2, 1, 0, 8},
	}
	for _, s := range steps {
		p := c.produce("idem", 0, idempotentBatch(t, pid, s.epoch, s.seq, s.n))
		wantCode(t, s.name, p.ErrorCode, s.code)
		if p.BaseOffset != s.offset {
			t.Errorf("%s: base offset %d, want %d", s.name, p.BaseOffset, s.offset)
		}
		// Kafka answers a rejected sequence or epoch with the log start
		// offset, which the Java producer compares with its last acked
		// offset.
		if p.LogStartOffset != 0 {
			t.Errorf("%s: log start offset %d, want 0", s.name, p.LogStartOffset)
		}
	}
	// An unknown producer on a never-written partition must start at 0.
	b.createTopic("fresh", 1, nil)
	p := c.produce("fresh", 0, idempotentBatch(t, pid+1, 0, 5, 1))
	wantCode(t, "unknown producer, sequence 5", p.ErrorCode, kerr.OutOfOrderSequenceNumber.Code)
	lo := roundTrip[*kmsg.ListOffsetsResponse](c, listOffsetsReq(1, "idem", []int64{-1}))
	if got := lo.Topics[0].Partitions[0].Offset; got != 9 {
		t.Errorf("end offset %d: duplicates or failures were appended", got)
	}
}
