package protocol

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/metadata"
)

func metadataReq(version int16, allowAuto bool, names ...string) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.Version, req.AllowAutoTopicCreation = version, allowAuto
	if names == nil {
		req.Topics = nil
		return req
	}
	req.Topics = []kmsg.MetadataRequestTopic{}
	for _, n := range names {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = ptr(n)
		req.Topics = append(req.Topics, rt)
	}
	return req
}

func topicNames(resp *kmsg.MetadataResponse) []string {
	var out []string
	for _, t := range resp.Topics {
		if t.Topic != nil {
			out = append(out, *t.Topic)
		}
	}
	return out
}

func TestMetadataListsTopics(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("alpha", 2, nil)
	b.createTopic("beta", 1, nil)
	c := b.dial()
	cases := []struct {
		name    string
		version int16
		topics  []string // nil: a null list
		want    []string
	}{
		{"v0 empty list means all", 0, []string{}, []string{"alpha", "beta"}},
		{"v1 null list means all", 1, nil, []string{"alpha", "beta"}},
		{"v1 empty list means none", 1, []string{}, nil},
		{"v4 null list", 4, nil, []string{"alpha", "beta"}},
		{"v9 flexible null list", 9, nil, []string{"alpha", "beta"}},
		{"v12 null list", 12, nil, []string{"alpha", "beta"}},
		{"v13 one topic", 13, []string{"beta"}, []string{"beta"}},
		{"v0 one topic", 0, []string{"alpha"}, []string{"alpha"}},
	}
	for _, tc := range cases {
		resp := roundTrip[*kmsg.MetadataResponse](c, metadataReq(tc.version, false, tc.topics...))
		if got := strings.Join(topicNames(resp), ","); got != strings.Join(tc.want, ",") {
			t.Errorf("%s: topics %q, want %q", tc.name, got, strings.Join(tc.want, ","))
		}
		if len(resp.Brokers) != 1 || resp.Brokers[0].Host != "127.0.0.1" || resp.Brokers[0].Port != b.srv.cfg.AdvertisePort {
			t.Errorf("%s: brokers %+v", tc.name, resp.Brokers)
		}
		for _, mt := range resp.Topics {
			wantCode(t, tc.name, mt.ErrorCode, 0)
			for _, p := range mt.Partitions {
				if p.Leader != 0 || len(p.Replicas) != 1 || len(p.ISR) != 1 {
					t.Errorf("%s: partition %d leader %d replicas %v isr %v", tc.name, p.Partition, p.Leader, p.Replicas, p.ISR)
				}
			}
		}
		if tc.version >= 2 && (resp.ClusterID == nil || *resp.ClusterID != "test-cluster") {
			t.Errorf("%s: cluster id %v", tc.name, resp.ClusterID)
		}
	}
	resp := roundTrip[*kmsg.MetadataResponse](c, metadataReq(12, false, "alpha"))
	if a, _ := b.log.Topic("alpha"); len(resp.Topics) != 1 || resp.Topics[0].TopicID != a.ID || len(resp.Topics[0].Partitions) != 2 {
		t.Errorf("v12 alpha: %+v", resp.Topics)
	}
}

func TestMetadataAutoCreate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		autoEnable string // broker auto.create.topics.enable
		version    int16
		allow      bool
		created    bool
	}{
		{"v0 always asks", "true", 0, false, true},
		{"v3 always asks", "true", 3, false, true},
		{"v4 allowed", "true", 4, true, true},
		{"v4 not allowed", "true", 4, false, false},
		{"v12 allowed", "true", 12, true, true},
		{"v13 not allowed", "true", 13, false, false},
		{"broker off v1", "false", 1, false, false},
		{"broker off v9 allowed", "false", 9, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := startBroker(t, withBrokerConfig("auto.create.topics.enable", tc.autoEnable, "num.partitions", "3"))
			c := b.dial()
			resp := roundTrip[*kmsg.MetadataResponse](c, metadataReq(tc.version, tc.allow, "auto-topic"))
			if len(resp.Topics) != 1 {
				t.Fatalf("%d topics in the answer", len(resp.Topics))
			}
			mt := resp.Topics[0]
			if !tc.created {
				wantCode(t, "metadata", mt.ErrorCode, kerr.UnknownTopicOrPartition.Code)
				if b.hasTopic("auto-topic") {
					t.Fatal("topic was created")
				}
				return
			}
			wantCode(t, "metadata", mt.ErrorCode, 0)
			if len(mt.Partitions) != 3 || !b.hasTopic("auto-topic") {
				t.Fatalf("auto-created topic has %d partitions (num.partitions=3), exists %v", len(mt.Partitions), b.hasTopic("auto-topic"))
			}
		})
	}
}

func TestMetadataInvalidTopicName(t *testing.T) {
	t.Parallel()
	for _, auto := range []string{"true", "false"} {
		b := startBroker(t, withBrokerConfig("auto.create.topics.enable", auto))
		c := b.dial()
		for _, name := range []string{"bad name", "a/b", "..", "", strings.Repeat("x", 250)} {
			for _, v := range []int16{1, 4, 12} {
				resp := roundTrip[*kmsg.MetadataResponse](c, metadataReq(v, true, name))
				wantCode(t, "metadata "+name, resp.Topics[0].ErrorCode, kerr.InvalidTopicException.Code)
			}
		}
		if n := len(b.log.Topics()); n != 0 {
			t.Fatalf("auto.create=%s: %d topics created from invalid names", auto, n)
		}
	}
}

func TestMetadataByTopicID(t *testing.T) {
	t.Parallel()
	id := metadata.TopicID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	b := startBroker(t, withTopic("by-id", id, 2))
	c := b.dial()
	for _, v := range []int16{12, 13} {
		req := metadataReq(v, true)
		req.Topics = []kmsg.MetadataRequestTopic{{TopicID: id}, {TopicID: [16]byte{0xff}}}
		resp := roundTrip[*kmsg.MetadataResponse](c, req)
		if len(resp.Topics) != 2 {
			t.Fatalf("v%d: %d topics", v, len(resp.Topics))
		}
		known, unknown := resp.Topics[0], resp.Topics[1]
		wantCode(t, "known id", known.ErrorCode, 0)
		if known.Topic == nil || *known.Topic != "by-id" || known.TopicID != id || len(known.Partitions) != 2 {
			t.Errorf("v%d known id: %+v", v, known)
		}
		wantCode(t, "unknown id", unknown.ErrorCode, kerr.UnknownTopicID.Code)
		if unknown.TopicID != [16]byte{0xff} {
			t.Errorf("v%d unknown id answered as %x", v, unknown.TopicID)
		}
	}
	// The Java client names a topic by id with an empty (not null) name;
	// Kafka looks up every topic whose id is set by that id.
	for _, v := range []int16{12, 13} {
		req := metadataReq(v, true)
		req.Topics = []kmsg.MetadataRequestTopic{{Topic: ptr(""), TopicID: id}, {Topic: ptr(""), TopicID: [16]byte{0xff}}}
		resp := roundTrip[*kmsg.MetadataResponse](c, req)
		known, unknown := resp.Topics[0], resp.Topics[1]
		wantCode(t, "known id, empty name", known.ErrorCode, 0)
		if known.Topic == nil || *known.Topic != "by-id" || known.TopicID != id {
			t.Errorf("v%d known id with an empty name: %+v", v, known)
		}
		wantCode(t, "unknown id, empty name", unknown.ErrorCode, kerr.UnknownTopicID.Code)
		if unknown.TopicID != [16]byte{0xff} {
			t.Errorf("v%d unknown id with an empty name answered as %x", v, unknown.TopicID)
		}
	}
	// v10 and v11 carry the id field but do not allow naming topics by
	// it: Kafka refuses the request with INVALID_REQUEST.
	for _, v := range []int16{10, 11} {
		req := metadataReq(v, true)
		req.Topics = []kmsg.MetadataRequestTopic{{TopicID: id}}
		resp := roundTrip[*kmsg.MetadataResponse](c, req)
		wantCode(t, "v10/11 null name", resp.Topics[0].ErrorCode, kerr.InvalidRequest.Code)
		req.Topics = []kmsg.MetadataRequestTopic{{Topic: ptr("by-id"), TopicID: id}}
		resp = roundTrip[*kmsg.MetadataResponse](c, req)
		wantCode(t, "v10/11 id", resp.Topics[0].ErrorCode, kerr.InvalidRequest.Code)
	}
}
