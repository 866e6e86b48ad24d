package protocol

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The group API tests share the helpers of this file: a broker whose
// groups answer at once (no initial rebalance delay, tiny minimum session
// timeout), request builders, and a way to run a request that waits (a
// JoinGroup) on a connection of its own.

// startGroupBroker starts a broker tuned for group tests, with extra
// broker configs.
func startGroupBroker(t *testing.T, kv ...string) *testBroker {
	t.Helper()
	cfg := append([]string{"group.initial.rebalance.delay.ms", "0", "group.min.session.timeout.ms", "10"}, kv...)
	return startBroker(t, withBrokerConfig(cfg...))
}

// subscription is consumer protocol metadata subscribing to topics.
func subscription(topics ...string) []byte {
	m := kmsg.NewConsumerMemberMetadata()
	m.Topics = topics
	return m.AppendTo(nil)
}

// joinReq builds a JoinGroup with one "range" protocol subscribing to
// topics, a 30 s session and a 10 s rebalance timeout.
func joinReq(version int16, group, member string, instance *string, topics ...string) *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version, req.Group, req.MemberID, req.InstanceID = version, group, member, instance
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis, req.ProtocolType = 30000, 10000, "consumer"
	req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: subscription(topics...)}}
	return req
}

func syncReq(version int16, group, member string, instance *string, gen int32, assign map[string][]byte) *kmsg.SyncGroupRequest {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version, req.Group, req.MemberID, req.InstanceID, req.Generation = version, group, member, instance, gen
	for id, a := range assign {
		req.GroupAssignment = append(req.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: id, MemberAssignment: a})
	}
	return req
}

func heartbeatReq(group, member string, instance *string, gen int32) *kmsg.HeartbeatRequest {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.InstanceID, req.Generation = 4, group, member, instance, gen
	return req
}

// commitReq commits offset at every partition of parts of topic.
func commitReq(version int16, group, member string, gen int32, topic string, offset int64, parts ...int32) *kmsg.OffsetCommitRequest {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.MemberID, req.Generation = version, group, member, gen
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	for _, p := range parts {
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = p, offset
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// commitCodes returns the error of every committed partition, in order.
func commitCodes(resp *kmsg.OffsetCommitResponse) []int16 {
	var out []int16
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out = append(out, p.ErrorCode)
		}
	}
	return out
}

// wantCodes fails the test unless every code is want.
func wantCodes(t *testing.T, what string, got []int16, want int16) {
	t.Helper()
	if len(got) == 0 {
		t.Fatalf("%s: no partitions answered", what)
	}
	for _, c := range got {
		wantCode(t, what, c, want)
	}
}

// goRoundTrip sends req on a connection of its own and delivers the
// response (nil on a connection failure) when it comes: for requests that
// wait, such as a JoinGroup during a rebalance.
func (b *testBroker) goRoundTrip(req kmsg.Request) <-chan kmsg.Response {
	c := b.dial()
	buf, corr := c.frame(req)
	c.write(buf)
	out := make(chan kmsg.Response, 1)
	go func() {
		got, body, err := c.readFrame()
		resp := req.ResponseKind()
		resp.SetVersion(req.GetVersion())
		if err == nil && got != corr {
			err = errors.New("correlation id mismatch")
		}
		if err == nil {
			err = decodeResponseBody(resp, body)
		}
		if err != nil {
			resp = nil
		}
		out <- resp
	}()
	return out
}

// await reads a goRoundTrip response of type R, with a hang guard.
func await[R kmsg.Response](t *testing.T, ch <-chan kmsg.Response) R {
	t.Helper()
	select {
	case resp := <-ch:
		r, ok := resp.(R)
		if !ok {
			t.Fatalf("response is %T", resp)
		}
		return r
	case <-time.After(ioBound):
		t.Fatalf("no response within %v", ioBound)
	}
	var zero R
	return zero
}

// awaitRebalance heartbeats as m until the group rebalances (a join was
// sent on another connection and must have arrived).
func awaitRebalance(t *testing.T, c *rawClient, group string, m member) {
	t.Helper()
	for range 1000 {
		code := roundTrip[*kmsg.HeartbeatResponse](c, heartbeatReq(group, m.id, nil, m.gen)).ErrorCode
		if code == kerr.RebalanceInProgress.Code {
			return
		}
		wantCode(t, "heartbeat before the rebalance", code, 0)
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the group never started rebalancing")
}

// member is a group member driven by a test: its id and generation.
type member struct {
	id  string
	gen int32
}

// joinAlone joins an empty group as its only member (KIP-394 round trip
// included) and syncs with assign as its own assignment.
func joinAlone(t *testing.T, c *rawClient, group string, assign []byte, topics ...string) member {
	t.Helper()
	resp := roundTrip[*kmsg.JoinGroupResponse](c, joinReq(9, group, "", nil, topics...))
	wantCode(t, "first join", resp.ErrorCode, kerr.MemberIDRequired.Code)
	resp = roundTrip[*kmsg.JoinGroupResponse](c, joinReq(9, group, resp.MemberID, nil, topics...))
	wantCode(t, "join", resp.ErrorCode, 0)
	if resp.LeaderID != resp.MemberID || len(resp.Members) != 1 {
		t.Fatalf("lone member: leader %q (self %q), %d members", resp.LeaderID, resp.MemberID, len(resp.Members))
	}
	m := member{resp.MemberID, resp.Generation}
	sresp := roundTrip[*kmsg.SyncGroupResponse](c, syncReq(5, group, m.id, nil, m.gen, map[string][]byte{m.id: assign}))
	wantCode(t, "sync", sresp.ErrorCode, 0)
	return m
}

func TestJoinGroupBadInput(t *testing.T) {
	t.Parallel()
	b := startGroupBroker(t, "group.max.session.timeout.ms", "60000")
	c := b.dial()
	noType := joinReq(9, "g", "", nil)
	noType.ProtocolType = ""
	short, long := joinReq(9, "g", "", nil), joinReq(9, "g", "", nil)
	short.SessionTimeoutMillis, long.SessionTimeoutMillis = 5, 60001
	cases := []struct {
		name string
		req  *kmsg.JoinGroupRequest
		want int16
	}{
		{"empty group id", joinReq(9, "", "", nil), kerr.InvalidGroupID.Code},
		{"session timeout below group.min.session.timeout.ms", short, kerr.InvalidSessionTimeout.Code},
		{"session timeout above group.max.session.timeout.ms", long, kerr.InvalidSessionTimeout.Code},
		{"no protocol type", noType, kerr.InconsistentGroupProtocol.Code},
		{"member id unknown to a group that does not exist", joinReq(9, "nope", "m-1", nil), kerr.UnknownMemberID.Code},
	}
	for _, tc := range cases {
		resp := roundTrip[*kmsg.JoinGroupResponse](c, tc.req)
		wantCode(t, tc.name, resp.ErrorCode, tc.want)
		if resp.Generation != -1 {
			t.Errorf("%s: generation %d, want -1", tc.name, resp.Generation)
		}
	}
	b.checkServing()
}

// TestJoinGroupMemberIDRequired: KIP-394. From v4 a new dynamic member
// first gets its member id with MEMBER_ID_REQUIRED; before v4 (and for a
// static member) it joins at once.
func TestJoinGroupMemberIDRequired(t *testing.T) {
	t.Parallel()
	b := startGroupBroker(t)
	c := b.dial()
	resp := roundTrip[*kmsg.JoinGroupResponse](c, joinReq(4, "kip394", "", nil, "t"))
	wantCode(t, "v4 join without member id", resp.ErrorCode, kerr.MemberIDRequired.Code)
	if resp.MemberID == "" {
		t.Fatal("MEMBER_ID_REQUIRED without a member id")
	}
	again := roundTrip[*kmsg.JoinGroupResponse](c, joinReq(4, "kip394", resp.MemberID, nil, "t"))
	wantCode(t, "v4 join with the given id", again.ErrorCode, 0)
	if again.MemberID != resp.MemberID || again.Generation != 1 || again.LeaderID != resp.MemberID {
		t.Fatalf("joined as %q gen %d leader %q; want %q gen 1 leading", again.MemberID, again.Generation, again.LeaderID, resp.MemberID)
	}
	v3 := roundTrip[*kmsg.JoinGroupResponse](c, joinReq(3, "old-client", "", nil, "t"))
	wantCode(t, "v3 join", v3.ErrorCode, 0)
	static := roundTrip[*kmsg.JoinGroupResponse](c, joinReq(9, "static", "", ptr("instance-1"), "t"))
	wantCode(t, "static join", static.ErrorCode, 0)
	if v3.MemberID == "" || static.MemberID == "" {
		t.Fatal("joined without a member id")
	}
}

// TestJoinGroupProtocolSelection: members must share the protocol type and
// a protocol; the leader gets every member's metadata for the chosen one.
func TestJoinGroupProtocolSelection(t *testing.T) {
	t.Parallel()
	b := startGroupBroker(t)
	c := b.dial()
	a := joinReq(3, "sel", "", nil, "t")
	a.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "sticky", Metadata: []byte("a-sticky")}, {Name: "range", Metadata: []byte("a-range")}}
	ra := roundTrip[*kmsg.JoinGroupResponse](c, a)
	wantCode(t, "first member", ra.ErrorCode, 0)
	roundTrip[*kmsg.SyncGroupResponse](c, syncReq(5, "sel", ra.MemberID, nil, ra.Generation, nil))

	other := joinReq(3, "sel", "", nil, "t")
	other.ProtocolType = "connect"
	wantCode(t, "other protocol type", roundTrip[*kmsg.JoinGroupResponse](b.dial(), other).ErrorCode, kerr.InconsistentGroupProtocol.Code)
	none := joinReq(3, "sel", "", nil, "t")
	none.Protocols[0].Name = "roundrobin"
	wantCode(t, "no common protocol", roundTrip[*kmsg.JoinGroupResponse](b.dial(), none).ErrorCode, kerr.InconsistentGroupProtocol.Code)

	bj := joinReq(3, "sel", "", nil, "t")
	bj.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte("b-range")}, {Name: "sticky", Metadata: []byte("b-sticky")}}
	bch := b.goRoundTrip(bj)
	awaitRebalance(t, c, "sel", member{ra.MemberID, ra.Generation})
	a.MemberID = ra.MemberID
	ra = roundTrip[*kmsg.JoinGroupResponse](c, a) // the leader rejoins
	rb := await[*kmsg.JoinGroupResponse](t, bch)
	wantCode(t, "leader rejoin", ra.ErrorCode, 0)
	wantCode(t, "second member", rb.ErrorCode, 0)
	if ra.Protocol == nil || *ra.Protocol != "sticky" || ra.LeaderID != ra.MemberID || len(ra.Members) != 2 {
		t.Fatalf("leader: protocol %v leader %q members %d", ra.Protocol, ra.LeaderID, len(ra.Members))
	}
	for _, m := range ra.Members {
		if want := map[string]string{ra.MemberID: "a-sticky", rb.MemberID: "b-sticky"}[m.MemberID]; string(m.ProtocolMetadata) != want {
			t.Errorf("member %s metadata %q, want %q", m.MemberID, m.ProtocolMetadata, want)
		}
	}
	if len(rb.Members) != 0 || rb.Generation != ra.Generation {
		t.Fatalf("follower: %d members, generation %d (leader %d)", len(rb.Members), rb.Generation, ra.Generation)
	}
}

// TestGroupMaxSize: a join beyond group.max.size is refused; members
// already in do not count against themselves.
func TestGroupMaxSize(t *testing.T) {
	t.Parallel()
	b := startGroupBroker(t, "group.max.size", "1")
	c := b.dial()
	m := joinAlone(t, c, "small", nil, "t")
	wantCode(t, "second member", roundTrip[*kmsg.JoinGroupResponse](b.dial(), joinReq(3, "small", "", nil, "t")).ErrorCode,
		kerr.GroupMaxSizeReached.Code)
	wantCode(t, "second member v9", roundTrip[*kmsg.JoinGroupResponse](b.dial(), joinReq(9, "small", "", nil, "t")).ErrorCode,
		kerr.GroupMaxSizeReached.Code)
	wantCode(t, "second static member", roundTrip[*kmsg.JoinGroupResponse](b.dial(), joinReq(9, "small", "", ptr("i"), "t")).ErrorCode,
		kerr.GroupMaxSizeReached.Code)
	wantCode(t, "the member itself", roundTrip[*kmsg.HeartbeatResponse](c, heartbeatReq("small", m.id, nil, m.gen)).ErrorCode, 0)
}

// addGroupSeeds adds fuzz seeds (fuzz_test.go) for the group APIs.
func addGroupSeeds(add func(string, kmsg.Request, ...int16), topic string, id [16]byte) {
	add("consumer", joinReq(0, "fuzz-group", "", nil, topic), 0, 4, 9)
	add("static", joinReq(5, "fuzz-group", "", ptr("fuzz-instance"), topic), 5)
	add("leader", syncReq(0, "fuzz-group", "m", nil, 1, map[string][]byte{"m": {0, 1}}), 0, 3, 5)
	add("member", heartbeatReq("fuzz-group", "m", nil, 1), 0, 3, 4)
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Group, leave.MemberID = "fuzz-group", "m"
	leave.Members = []kmsg.LeaveGroupRequestMember{{MemberID: "m"}, {InstanceID: ptr("fuzz-instance")}}
	add("batch", leave, 0, 3, 5)
	find := kmsg.NewPtrFindCoordinatorRequest()
	find.CoordinatorKey, find.CoordinatorKeys = "fuzz-group", []string{"fuzz-group", "other"}
	add("group", find, 0, 3, 4, 6)
	txn := kmsg.NewPtrFindCoordinatorRequest()
	txn.CoordinatorType, txn.CoordinatorKey, txn.CoordinatorKeys = 1, "txn", []string{"txn"}
	add("transaction", txn, 1, 4)
	commit := commitReq(0, "fuzz-group", "", -1, topic, 1, 0, 1)
	commit.Topics[0].TopicID = id
	add("standalone", commit, 0, 2, 8, 10)
	fetch := kmsg.NewPtrOffsetFetchRequest()
	fetch.Group, fetch.Topics = "fuzz-group", []kmsg.OffsetFetchRequestTopic{{Topic: topic, Partitions: []int32{0, 1}}}
	fetch.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "fuzz-group", Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: topic, TopicID: id, Partitions: []int32{0}}}},
		{Group: "other"}}
	fetch.RequireStable = true
	add("partitions", fetch, 1, 7, 8, 10)
	describe := kmsg.NewPtrDescribeGroupsRequest()
	describe.Groups, describe.IncludeAuthorizedOperations = []string{"fuzz-group", "", "other"}, true
	add("groups", describe, 0, 5, 6)
	list := kmsg.NewPtrListGroupsRequest()
	list.StatesFilter, list.TypesFilter = []string{"stable", "Empty"}, []string{"classic"}
	add("filtered", list, 0, 4, 5)
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"fuzz-group", "", "other"}
	add("groups", del, 0, 3)
	odel := kmsg.NewPtrOffsetDeleteRequest()
	odel.Group = "fuzz-group"
	odel.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: topic, Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
	add("partition", odel, 0)
}
