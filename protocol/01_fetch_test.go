package protocol

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestFetchReadsWhatWasProduced(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	topic := b.createTopic("f", 1, nil)
	c := b.dial()
	var sent [][]byte
	for i := range 3 {
		batch := plainBatch(i+1, 50, 1000).build(t)
		c.mustProduce("f", 0, batch)
		sent = append(sent, batch)
	}
	for _, v := range []int16{4, 7, 11, 12, 13, 16, 18} {
		req := fetchReq(v, "f", topic.ID, 0, 0)
		p := c.fetchOne(req)
		wantCode(t, "fetch", p.ErrorCode, 0)
		if p.HighWatermark != 6 || p.LastStableOffset != 6 || (v >= 5 && p.LogStartOffset != 0) {
			t.Errorf("v%d: high watermark %d, last stable %d, log start %d", v, p.HighWatermark, p.LastStableOffset, p.LogStartOffset)
		}
		got := splitFetched(t, p.RecordBatches)
		if len(got) != 3 {
			t.Fatalf("v%d: %d batches", v, len(got))
		}
		for i, raw := range got {
			// The broker rewrote only the base offset: 0, 1, 3.
			if base := int64(raw[7]); base != []int64{0, 1, 3}[i] || !batchCRCOK(raw) || string(raw[12:]) != string(sent[i][12:]) {
				t.Errorf("v%d: batch %d: base %d, crc ok %v", v, i, base, batchCRCOK(raw))
			}
		}
	}
	// From the middle of a batch: the whole batch holding the offset.
	p := c.fetchOne(fetchReq(11, "f", topic.ID, 0, 4))
	if got := splitFetched(t, p.RecordBatches); len(got) != 1 || got[0][7] != 3 {
		t.Fatalf("fetch at offset 4: %d batches", len(got))
	}
	// At the high watermark: nothing, no error.
	p = c.fetchOne(fetchReq(11, "f", topic.ID, 0, 6))
	if p.ErrorCode != 0 || len(p.RecordBatches) != 0 || p.HighWatermark != 6 {
		t.Fatalf("fetch at the high watermark: error %s, %d bytes", errName(p.ErrorCode), len(p.RecordBatches))
	}
}

func TestFetchErrors(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	topic := b.createTopic("f", 1, nil)
	c := b.dial()
	c.mustProduce("f", 0, plainBatch(3, 10, 1).build(t))
	cases := []struct {
		name    string
		version int16
		topic   string
		id      [16]byte
		part    int32
		offset  int64
		code    int16
	}{
		{"offset past the end", 11, "f", topic.ID, 0, 100, kerr.OffsetOutOfRange.Code},
		{"negative offset", 11, "f", topic.ID, 0, -1, kerr.OffsetOutOfRange.Code},
		{"v4 offset past the end", 4, "f", topic.ID, 0, 4, kerr.OffsetOutOfRange.Code},
		{"unknown topic", 12, "nope", [16]byte{}, 0, 0, kerr.UnknownTopicOrPartition.Code},
		{"unknown partition", 12, "f", [16]byte{}, 3, 0, kerr.UnknownTopicOrPartition.Code},
		{"unknown topic id", 13, "", [16]byte{7}, 0, 0, kerr.UnknownTopicID.Code},
		{"unknown partition by id", 16, "", topic.ID, 9, 0, kerr.UnknownTopicOrPartition.Code},
	}
	for _, tc := range cases {
		// A failing partition is answered at once, however long the
		// client would wait for data.
		req := fetchReq(tc.version, tc.topic, tc.id, tc.part, tc.offset)
		req.MaxWaitMillis, req.MinBytes = 300_000, 1
		p := c.fetchOne(req)
		wantCode(t, tc.name, p.ErrorCode, tc.code)
		// As Kafka does, a failed partition reports unknown offsets.
		if p.HighWatermark != -1 || (tc.version >= 5 && p.LogStartOffset != -1) {
			t.Errorf("%s: high watermark %d, log start %d, want -1 and -1", tc.name, p.HighWatermark, p.LogStartOffset)
		}
		if len(p.RecordBatches) != 0 {
			t.Errorf("%s: %d bytes of records with an error", tc.name, len(p.RecordBatches))
		}
	}
}

// TestFetchLongPollWakesOnData: a fetch waiting for min_bytes returns with
// the data once a producer on another connection appends it. MaxWait is
// the 5-minute cap, far beyond the client's I/O bound, so only the wake-up
// can answer it in time.
func TestFetchLongPollWakesOnData(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	topic := b.createTopic("poll", 2, nil)
	consumer, producer := b.dial(), b.dial()
	for _, v := range []int16{4, 11, 13} {
		_, hw := topic.Partition(1).Offsets()
		req := fetchReq(v, "poll", topic.ID, 1, hw)
		req.MaxWaitMillis, req.MinBytes = 300_000, 1
		corr := consumer.send(req)
		producer.mustProduce("poll", 0, plainBatch(1, 10, 1).build(t)) // another partition: no wake-up needed
		producer.mustProduce("poll", 1, plainBatch(2, 10, 1).build(t))
		resp := consumer.recv(req, corr).(*kmsg.FetchResponse)
		p := resp.Topics[0].Partitions[0]
		wantCode(t, "long poll", p.ErrorCode, 0)
		if got := splitFetched(t, p.RecordBatches); len(got) != 1 || p.HighWatermark != hw+2 {
			t.Fatalf("v%d: long poll returned %d batches, high watermark %d", v, len(got), p.HighWatermark)
		}
	}
}

// TestFetchLongPollTimesOut: with no data the fetch returns empty after
// max_wait_ms, without an error.
func TestFetchLongPollTimesOut(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("quiet", 1, nil)
	c := b.dial()
	for _, v := range []int16{4, 12} {
		req := fetchReq(v, "quiet", [16]byte{}, 0, 0)
		req.MaxWaitMillis, req.MinBytes = 20, 1
		p := c.fetchOne(req)
		if p.ErrorCode != 0 || len(p.RecordBatches) != 0 || p.HighWatermark != 0 {
			t.Fatalf("v%d: error %s, %d bytes, high watermark %d", v, errName(p.ErrorCode), len(p.RecordBatches), p.HighWatermark)
		}
	}
}

// TestFetchFirstBatchLargerThanLimits: KIP-74. The first batch is returned
// whole even when larger than partition_max_bytes and max_bytes; nothing
// after it is.
func TestFetchFirstBatchLargerThanLimits(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("big", 2, nil)
	c := b.dial()
	for part := int32(0); part < 2; part++ {
		c.mustProduce("big", part, plainBatch(4, 500, 1).build(t))
		c.mustProduce("big", part, plainBatch(4, 500, 1).build(t))
	}
	one := int32(len(plainBatch(4, 500, 1).build(t)))
	// Only the first partition with data may exceed the limits: Kafka
	// answers a later one whose first batch does not fit with no records.
	cases := []struct {
		name                   string
		maxBytes, partMaxBytes int32
		batches                []int // per partition
	}{
		{"partition max below a batch", 50 << 20, 100, []int{1, 0}},
		{"max bytes below a batch", 100, 10 << 20, []int{1, 0}},
		{"room for one batch each", 50 << 20, one + 10, []int{1, 1}},
		{"room for one batch in all", one + 10, 10 << 20, []int{1, 0}},
		{"room for three batches in all", 3*one + 10, 10 << 20, []int{2, 1}},
		{"room for everything", 50 << 20, 10 << 20, []int{2, 2}},
	}
	for _, tc := range cases {
		req := fetchReq(11, "big", [16]byte{}, 0, 0)
		req.MaxBytes = tc.maxBytes
		req.Topics[0].Partitions[0].PartitionMaxBytes = tc.partMaxBytes
		second := req.Topics[0].Partitions[0]
		second.Partition = 1
		req.Topics[0].Partitions = append(req.Topics[0].Partitions, second)
		resp := roundTrip[*kmsg.FetchResponse](c, req)
		for i, p := range resp.Topics[0].Partitions {
			wantCode(t, tc.name, p.ErrorCode, 0)
			if got := len(splitFetched(t, p.RecordBatches)); got != tc.batches[i] {
				t.Errorf("%s: partition %d: %d batches, want %d", tc.name, i, got, tc.batches[i])
			}
			// Every partition reports its offsets, data or not.
			if p.HighWatermark != 8 {
				t.Errorf("%s: partition %d: high watermark %d", tc.name, i, p.HighWatermark)
			}
		}
	}
}

// TestFetchSessions: sessions (KIP-227) are declined. Every answer carries
// session id 0; naming a session that does not exist is
// FETCH_SESSION_ID_NOT_FOUND.
func TestFetchSessions(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	topic := b.createTopic("s", 1, nil)
	c := b.dial()
	c.mustProduce("s", 0, plainBatch(1, 10, 1).build(t))
	cases := []struct {
		name      string
		sessionID int32
		epoch     int32
		code      int16
	}{
		{"sessionless", 0, -1, 0},
		{"asks for a new session", 0, 0, 0},
		{"closes a session and fetches", 77, -1, 0},
		{"resets a session", 77, 0, 0},
		{"unknown session", 77, 1, kerr.FetchSessionIDNotFound.Code},
		{"unknown session later epoch", 12345, 9, kerr.FetchSessionIDNotFound.Code},
	}
	for _, tc := range cases {
		for _, v := range []int16{7, 12, 18} {
			req := fetchReq(v, "s", topic.ID, 0, 0)
			req.SessionID, req.SessionEpoch = tc.sessionID, tc.epoch
			resp := roundTrip[*kmsg.FetchResponse](c, req)
			wantCode(t, tc.name, resp.ErrorCode, tc.code)
			if resp.SessionID != 0 {
				t.Errorf("%s v%d: session id %d in the answer", tc.name, v, resp.SessionID)
			}
			if tc.code == 0 && (len(resp.Topics) != 1 || len(resp.Topics[0].Partitions[0].RecordBatches) == 0) {
				t.Errorf("%s v%d: no data", tc.name, v)
			}
			if tc.code != 0 && len(resp.Topics) != 0 {
				t.Errorf("%s v%d: %d topics with a top-level error", tc.name, v, len(resp.Topics))
			}
		}
	}
}
