package protocol

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/metadata"
)

// TestOffsetCommitErrors: bad commits get their code and disturb nothing:
// the group's committed offsets are exactly the good commits'.
func TestOffsetCommitErrors(t *testing.T) {
	t.Parallel()
	b := startGroupBroker(t, "offset.metadata.max.bytes", "16")
	b.createTopic("t", 2, nil)
	c := b.dial()
	m := joinAlone(t, c, "g", nil, "t")
	wantCodes(t, "commit", commitCodes(roundTrip[*kmsg.OffsetCommitResponse](c, commitReq(8, "g", m.id, m.gen, "t", 7, 0, 1))), 0)
	cases := []struct {
		name string
		req  *kmsg.OffsetCommitRequest
		want int16
	}{
		{"stale generation", commitReq(8, "g", m.id, m.gen-1, "t", 99, 0, 1), kerr.IllegalGeneration.Code},
		{"future generation", commitReq(8, "g", m.id, m.gen+1, "t", 99, 0, 1), kerr.IllegalGeneration.Code},
		{"unknown member", commitReq(8, "g", "nobody", m.gen, "t", 99, 0, 1), kerr.UnknownMemberID.Code},
		{"standalone commit to a group in use", commitReq(8, "g", "", -1, "t", 99, 0, 1), kerr.UnknownMemberID.Code},
		{"generation for an unknown group (v8)", commitReq(8, "nope", "m", 1, "t", 99, 0), kerr.IllegalGeneration.Code},
		{"generation for an unknown group (v9)", commitReq(9, "nope", "m", 1, "t", 99, 0), kerr.GroupIDNotFound.Code},
		{"unknown topic", commitReq(8, "g", m.id, m.gen, "nope", 99, 0), kerr.UnknownTopicOrPartition.Code},
		{"unknown partition", commitReq(8, "g", m.id, m.gen, "t", 99, 5), kerr.UnknownTopicOrPartition.Code},
	}
	for _, tc := range cases {
		wantCodes(t, tc.name, commitCodes(roundTrip[*kmsg.OffsetCommitResponse](c, tc.req)), tc.want)
	}
	long := commitReq(8, "g", m.id, m.gen, "t", 99, 0, 1)
	long.Topics[0].Partitions[0].Metadata = ptr("metadata longer than sixteen bytes")
	long.Topics[0].Partitions[1].Metadata = ptr("short")
	got := commitCodes(roundTrip[*kmsg.OffsetCommitResponse](c, long))
	wantCode(t, "oversized metadata", got[0], kerr.OffsetMetadataTooLarge.Code)
	wantCode(t, "metadata next to the oversized one", got[1], 0)
	if offs := fetchOffsets(t, c, "g", "t", 0, 1); offs != "7/,99/short" {
		t.Fatalf("committed offsets %s, want 7/,99/short", offs)
	}
	b.checkServing()
}

// TestOffsetCommitStandalone: generation -1 commits to an empty (or new)
// group, the empty group id included as Kafka 4 takes it; v0 has no
// generation at all; v10 names topics by id.
func TestOffsetCommitStandalone(t *testing.T) {
	t.Parallel()
	id := metadata.NewTopicID()
	b := startBroker(t, withTopic("t", id, 2))
	c := b.dial()
	for _, v := range []int16{0, 2, 8} {
		wantCodes(t, "standalone commit", commitCodes(roundTrip[*kmsg.OffsetCommitResponse](c, commitReq(v, "solo", "", -1, "t", int64(v), 0))), 0)
	}
	wantCodes(t, "empty group id", commitCodes(roundTrip[*kmsg.OffsetCommitResponse](c, commitReq(8, "", "", -1, "t", 3, 1))), 0)
	byID := commitReq(10, "solo", "", -1, "", 10, 1)
	byID.Topics[0].TopicID = id
	resp := roundTrip[*kmsg.OffsetCommitResponse](c, byID)
	wantCodes(t, "v10 by id", commitCodes(resp), 0)
	if resp.Topics[0].TopicID != id {
		t.Fatal("v10 answer does not carry the topic id")
	}
	unknown := commitReq(10, "solo", "", -1, "", 10, 1)
	unknown.Topics[0].TopicID = metadata.NewTopicID()
	wantCodes(t, "v10 unknown id", commitCodes(roundTrip[*kmsg.OffsetCommitResponse](c, unknown)), kerr.UnknownTopicID.Code)
	if offs := fetchOffsets(t, c, "solo", "t", 0, 1); offs != "8/,10/" {
		t.Fatalf("committed %s", offs)
	}
	if offs := fetchOffsets(t, c, "", "t", 0, 1); offs != "-1/,3/" {
		t.Fatalf("committed to the empty group id %s", offs)
	}
}
