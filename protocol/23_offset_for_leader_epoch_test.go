package protocol

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// epochedTopic creates topic "ep" whose partition 0 has the leader-epoch
// history 0@0, 1@3, 3@5 (epoch 2 started at 5 too, but nothing was appended
// in it before epoch 3 took over) and log end offset 7; partition 1 never
// changed epoch and holds 2 records.
func epochedTopic(t *testing.T, b *testBroker, c *rawClient) {
	t.Helper()
	tp := b.createTopic("ep", 2, nil)
	p := tp.Partition(0)
	bump := func(want int32) {
		t.Helper()
		if got, err := b.log.BumpLeaderEpoch(context.Background(), p); err != nil || got != want {
			t.Fatalf("bump: epoch %d, %v; want %d", got, err, want)
		}
	}
	c.mustProduce("ep", 0, plainBatch(3, 10, 1000).build(t)) // 0-2, epoch 0
	bump(1)
	c.mustProduce("ep", 0, plainBatch(2, 10, 2000).build(t)) // 3-4, epoch 1
	bump(2)
	bump(3)
	c.mustProduce("ep", 0, plainBatch(2, 10, 3000).build(t)) // 5-6, epoch 3
	c.mustProduce("ep", 1, plainBatch(2, 10, 1000).build(t))
}

// epochReq asks for one partition's epoch end offset.
func epochReq(version int16, topic string, part, current, epoch int32) *kmsg.OffsetForLeaderEpochRequest {
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.Version, req.ReplicaID = version, -1
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = part, current, epoch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func epochAnswer(t *testing.T, c *rawClient, req *kmsg.OffsetForLeaderEpochRequest) kmsg.OffsetForLeaderEpochResponseTopicPartition {
	t.Helper()
	resp := roundTrip[*kmsg.OffsetForLeaderEpochResponse](c, req)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("answered %d topics", len(resp.Topics))
	}
	if resp.Topics[0].Topic != req.Topics[0].Topic || resp.Topics[0].Partitions[0].Partition != req.Topics[0].Partitions[0].Partition {
		t.Fatalf("answered %s/%d", resp.Topics[0].Topic, resp.Topics[0].Partitions[0].Partition)
	}
	return resp.Topics[0].Partitions[0]
}

// TestOffsetForLeaderEpoch checks every branch of Kafka's endOffsetFor and
// of the request's validation, at every served version.
func TestOffsetForLeaderEpoch(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := b.dial()
	epochedTopic(t, b, c)
	cases := []struct {
		name           string
		topic          string
		part           int32
		current, epoch int32
		code           int16
		wantEpoch      int32
		wantEnd        int64
	}{
		{"current epoch ends at the log end offset", "ep", 0, -1, 3, 0, 3, 7},
		{"older epoch ends where the next one starts", "ep", 0, -1, 1, 0, 1, 5},
		{"first epoch", "ep", 0, -1, 0, 0, 0, 3},
		{"an epoch never had between two: the one below", "ep", 0, -1, 2, 0, 1, 5},
		{"epoch above the current one: undefined", "ep", 0, -1, 4, 0, -1, -1},
		{"undefined epoch: undefined", "ep", 0, -1, -1, 0, -1, -1},
		{"current leader epoch matches", "ep", 0, 3, 1, 0, 1, 5},
		{"stale current leader epoch", "ep", 0, 2, 1, kerr.FencedLeaderEpoch.Code, -1, -1},
		{"current leader epoch from the future", "ep", 0, 4, 1, kerr.UnknownLeaderEpoch.Code, -1, -1},
		{"never bumped: epoch 0 at the log end", "ep", 1, 0, 0, 0, 0, 2},
		{"never bumped: a later epoch is undefined", "ep", 1, -1, 1, 0, -1, -1},
		{"unknown partition", "ep", 2, -1, 0, kerr.UnknownTopicOrPartition.Code, -1, -1},
		{"unknown topic", "nope", 0, -1, 0, kerr.UnknownTopicOrPartition.Code, -1, -1},
	}
	for v := int16(2); v <= 4; v++ {
		for _, tc := range cases {
			p := epochAnswer(t, c, epochReq(v, tc.topic, tc.part, tc.current, tc.epoch))
			wantCode(t, tc.name, p.ErrorCode, tc.code)
			if p.LeaderEpoch != tc.wantEpoch || p.EndOffset != tc.wantEnd {
				t.Errorf("%s v%d: (%d, %d), want (%d, %d)", tc.name, v, p.LeaderEpoch, p.EndOffset, tc.wantEpoch, tc.wantEnd)
			}
		}
	}
	// A follower's replica id (v3+) is answered the same way.
	req := epochReq(4, "ep", 0, 3, 1)
	req.ReplicaID = 1
	if p := epochAnswer(t, c, req); p.ErrorCode != 0 || p.LeaderEpoch != 1 || p.EndOffset != 5 {
		t.Errorf("replica id 1: %+v", p)
	}
	b.checkServing()
}

// TestOffsetForLeaderEpochAfterLogStartMoved: epochs that started below the
// log start are answered from the log start, as Kafka's cache truncated
// from the start is.
func TestOffsetForLeaderEpochAfterLogStartMoved(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := b.dial()
	epochedTopic(t, b, c)
	tp, _ := b.log.Topic("ep")
	if _, err := b.log.DeleteRecords(context.Background(), tp.Partition(0), 4); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		epoch     int32
		wantEpoch int32
		wantEnd   int64
	}{
		{0, 0, 4}, // below the first remaining epoch: itself, ending at its start
		{1, 1, 5}, // epoch 1 now starts at 4 and still ends at 5
		{3, 3, 7},
	} {
		p := epochAnswer(t, c, epochReq(4, "ep", 0, 3, tc.epoch))
		wantCode(t, "after DeleteRecords", p.ErrorCode, 0)
		if p.LeaderEpoch != tc.wantEpoch || p.EndOffset != tc.wantEnd {
			t.Errorf("epoch %d after the log start moved to 4: (%d, %d), want (%d, %d)", tc.epoch, p.LeaderEpoch, p.EndOffset, tc.wantEpoch, tc.wantEnd)
		}
	}
	// ListOffsets earliest now answers epoch 1, the one the log start is in.
	lo := roundTrip[*kmsg.ListOffsetsResponse](c, listOffsetsReq(11, "ep", []int64{-2})).Topics[0].Partitions[0]
	if lo.ErrorCode != 0 || lo.Offset != 4 || lo.LeaderEpoch != 1 {
		t.Errorf("earliest after DeleteRecords: %+v", lo)
	}
}

// TestLeaderEpochsInAnswers: Metadata, ListOffsets and fetched batches all
// carry the partition's epochs, and CurrentLeaderEpoch fences ListOffsets.
func TestLeaderEpochsInAnswers(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := b.dial()
	epochedTopic(t, b, c)
	mreq := kmsg.NewPtrMetadataRequest()
	mreq.Version = 12
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr("ep")
	mreq.Topics = append(mreq.Topics, mt)
	meta := roundTrip[*kmsg.MetadataResponse](c, mreq)
	if ps := meta.Topics[0].Partitions; ps[0].LeaderEpoch != 3 || ps[1].LeaderEpoch != 0 {
		t.Fatalf("metadata leader epochs %d, %d; want 3, 0", ps[0].LeaderEpoch, ps[1].LeaderEpoch)
	}

	// ListOffsets: latest is in the current epoch, earliest in the first,
	// a timestamp in the epoch of the batch that holds it.
	for _, tc := range []struct {
		ts        int64
		offset    int64
		wantEpoch int32
	}{{-1, 7, 3}, {-2, 0, 0}, {-3, 6, 3}, {1001, 1, 0}, {2000, 3, 1}, {3001, 6, 3}, {9999, -1, -1}} {
		req := listOffsetsReq(11, "ep", []int64{tc.ts})
		req.Topics[0].Partitions[0].CurrentLeaderEpoch = 3
		p := roundTrip[*kmsg.ListOffsetsResponse](c, req).Topics[0].Partitions[0]
		if p.ErrorCode != 0 || p.Offset != tc.offset || p.LeaderEpoch != tc.wantEpoch {
			t.Errorf("list offsets %d: code %d offset %d epoch %d; want offset %d epoch %d", tc.ts, p.ErrorCode, p.Offset, p.LeaderEpoch, tc.offset, tc.wantEpoch)
		}
	}
	for _, tc := range []struct {
		current int32
		code    int16
	}{{2, kerr.FencedLeaderEpoch.Code}, {4, kerr.UnknownLeaderEpoch.Code}, {-1, 0}} {
		req := listOffsetsReq(11, "ep", []int64{-1})
		req.Topics[0].Partitions[0].CurrentLeaderEpoch = tc.current
		p := roundTrip[*kmsg.ListOffsetsResponse](c, req).Topics[0].Partitions[0]
		wantCode(t, "list offsets with a current leader epoch", p.ErrorCode, tc.code)
	}

	// Each fetched batch carries the epoch it was appended in.
	got := map[int64]int32{}
	for _, raw := range splitFetched(t, c.fetchOne(fetchReq(12, "ep", [16]byte{}, 0, 0)).RecordBatches) {
		got[int64(binary.BigEndian.Uint64(raw))] = int32(binary.BigEndian.Uint32(raw[12:]))
	}
	if want := map[int64]int32{0: 0, 3: 1, 5: 3}; len(got) != 3 || got[0] != want[0] || got[3] != want[3] || got[5] != want[5] {
		t.Fatalf("fetched batch epochs %v, want %v", got, want)
	}
}

// TestFetchLeaderEpochs: CurrentLeaderEpoch fences a fetch, and from v12 a
// LastFetchedEpoch that ended before the fetch offset gets DivergingEpoch.
func TestFetchLeaderEpochs(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := b.dial()
	epochedTopic(t, b, c)
	cases := []struct {
		name        string
		version     int16
		offset      int64
		current     int32
		lastFetched int32
		code        int16
		diverging   [2]int64 // epoch, end offset; -1, -1 when none
		records     bool
	}{
		{"current epoch", 12, 0, 3, -1, 0, [2]int64{-1, -1}, true},
		{"no epoch given", 12, 0, -1, -1, 0, [2]int64{-1, -1}, true},
		{"stale epoch", 12, 0, 2, -1, kerr.FencedLeaderEpoch.Code, [2]int64{-1, -1}, false},
		{"epoch from the future", 12, 0, 4, -1, kerr.UnknownLeaderEpoch.Code, [2]int64{-1, -1}, false},
		{"stale epoch before v12", 11, 0, 0, -1, kerr.FencedLeaderEpoch.Code, [2]int64{-1, -1}, false},
		{"last fetched epoch consistent", 12, 4, 3, 1, 0, [2]int64{-1, -1}, true},
		{"last fetched epoch at its end", 12, 5, 3, 1, 0, [2]int64{-1, -1}, true},
		{"last fetched epoch ended before the offset", 12, 6, 3, 1, 0, [2]int64{1, 5}, false},
		{"last fetched epoch never had", 12, 5, 3, 2, 0, [2]int64{1, 5}, false},
		{"last fetched epoch is the current one", 13, 6, 3, 3, 0, [2]int64{-1, -1}, true},
		{"last fetched epoch unknown here", 12, 6, 3, 4, kerr.OffsetOutOfRange.Code, [2]int64{-1, -1}, false},
	}
	for _, tc := range cases {
		tp, _ := b.log.Topic("ep")
		req := fetchReq(tc.version, "ep", tp.ID, 0, tc.offset)
		req.Topics[0].Partitions[0].CurrentLeaderEpoch = tc.current
		req.Topics[0].Partitions[0].LastFetchedEpoch = tc.lastFetched
		p := c.fetchOne(req)
		wantCode(t, tc.name, p.ErrorCode, tc.code)
		if d := p.DivergingEpoch; int64(d.Epoch) != tc.diverging[0] || d.EndOffset != tc.diverging[1] {
			t.Errorf("%s: diverging epoch (%d, %d), want %v", tc.name, d.Epoch, d.EndOffset, tc.diverging)
		}
		if got := len(p.RecordBatches) > 0; got != tc.records {
			t.Errorf("%s: records %v, want %v", tc.name, got, tc.records)
		}
		if tc.code == 0 && p.HighWatermark != 7 {
			t.Errorf("%s: high watermark %d", tc.name, p.HighWatermark)
		}
	}
}

// TestCommittedLeaderEpoch: the leader epoch committed with an offset is
// stored and returned by OffsetFetch (cmd/broker's group tests check it
// across a restart).
func TestCommittedLeaderEpoch(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("ce", 1, nil)
	c := b.dial()
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Version, commit.Group, commit.Generation = 9, "g", -1
	ct := kmsg.NewOffsetCommitRequestTopic()
	ct.Topic = "ce"
	cp := kmsg.NewOffsetCommitRequestTopicPartition()
	cp.Partition, cp.Offset, cp.LeaderEpoch = 0, 42, 5
	ct.Partitions = append(ct.Partitions, cp)
	commit.Topics = append(commit.Topics, ct)
	cr := roundTrip[*kmsg.OffsetCommitResponse](c, commit)
	wantCode(t, "commit", cr.Topics[0].Partitions[0].ErrorCode, 0)
	fetchEpoch := func(version int16) (int64, int32) {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version, req.Group = version, "g"
		rt := kmsg.NewOffsetFetchRequestTopic()
		rt.Topic, rt.Partitions = "ce", []int32{0}
		req.Topics = append(req.Topics, rt)
		resp := roundTrip[*kmsg.OffsetFetchResponse](c, req)
		p := resp.Topics[0].Partitions[0]
		return p.Offset, p.LeaderEpoch
	}
	for _, v := range []int16{5, 7} {
		if off, ep := fetchEpoch(v); off != 42 || ep != 5 {
			t.Fatalf("offset fetch v%d: offset %d epoch %d, want 42 5", v, off, ep)
		}
	}
}
