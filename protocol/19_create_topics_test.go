package protocol

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// newTopicReq is one CreateTopics entry; configs alternate name, value.
func newTopicReq(name string, partitions int32, rf int16, configs ...string) kmsg.CreateTopicsRequestTopic {
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions, rf
	for i := 0; i+1 < len(configs); i += 2 {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = configs[i], ptr(configs[i+1])
		rt.Configs = append(rt.Configs, c)
	}
	return rt
}

func createTopicsReq(version int16, validateOnly bool, topics ...kmsg.CreateTopicsRequestTopic) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version, req.ValidateOnly, req.TimeoutMillis, req.Topics = version, validateOnly, 30000, topics
	return req
}

func TestCreateTopics(t *testing.T) {
	t.Parallel()
	b := startBroker(t, withBrokerConfig("num.partitions", "4"))
	b.createTopic("existing", 1, nil)
	c := b.dial()
	nullValue := newTopicReq("null-config", 1, 1)
	nullValue.Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: "retention.ms"}}
	assigned := newTopicReq("assigned", -1, -1)
	assigned.ReplicaAssignment = []kmsg.CreateTopicsRequestTopicReplicaAssignment{{Partition: 0, Replicas: []int32{0}}, {Partition: 1, Replicas: []int32{0}}}
	assignedWithCount, assignedWithRF := assigned, assigned
	assignedWithCount.Topic, assignedWithCount.NumPartitions = "assigned-count", 2
	assignedWithRF.Topic, assignedWithRF.ReplicationFactor = "assigned-rf", 1
	cases := []struct {
		name    string
		topic   kmsg.CreateTopicsRequestTopic
		code    int16
		created bool
		parts   int32
	}{
		{"default partitions and replication", newTopicReq("defaults", -1, -1), 0, true, 4},
		{"explicit", newTopicReq("explicit", 3, 1, "retention.ms", "1000"), 0, true, 3},
		{"replication factor 3 is reported as 1", newTopicReq("rf3", 1, 3), 0, true, 1},
		{"replica assignment", assigned, 0, true, 2},
		{"assignment and a partition count", assignedWithCount, kerr.InvalidPartitions.Code, false, -1},
		{"assignment and a replication factor", assignedWithRF, kerr.InvalidReplicationFactor.Code, false, -1},
		{"already exists", newTopicReq("existing", 1, 1), kerr.TopicAlreadyExists.Code, false, -1},
		{"zero partitions", newTopicReq("zero", 0, 1), kerr.InvalidPartitions.Code, false, -1},
		{"negative partitions", newTopicReq("negative", -2, 1), kerr.InvalidPartitions.Code, false, -1},
		{"zero replication", newTopicReq("rf0", 1, 0), kerr.InvalidReplicationFactor.Code, false, -1},
		{"bad config value", newTopicReq("bad-value", 1, 1, "retention.ms", "soon"), kerr.InvalidConfig.Code, false, -1},
		{"unknown config", newTopicReq("bad-name", 1, 1, "no.such.config", "1"), kerr.InvalidConfig.Code, false, -1},
		{"enum config", newTopicReq("bad-enum", 1, 1, "cleanup.policy", "shred"), kerr.InvalidConfig.Code, false, -1},
		{"null config value", nullValue, kerr.InvalidConfig.Code, false, -1},
		{"invalid name", newTopicReq("no spaces", 1, 1), kerr.InvalidTopicException.Code, false, -1},
	}
	for _, tc := range cases {
		for _, v := range []int16{1, 5, 7} {
			name := tc.topic.Topic
			if tc.created {
				tc.topic.Topic = name + "-v" + string(rune('0'+v))
			}
			resp := roundTrip[*kmsg.CreateTopicsResponse](c, createTopicsReq(v, false, tc.topic))
			st := resp.Topics[0]
			tc.topic.Topic = name
			wantCode(t, tc.name, st.ErrorCode, tc.code)
			if tc.code != 0 && (st.ErrorMessage == nil || *st.ErrorMessage == "") {
				t.Errorf("%s v%d: no error message", tc.name, v)
			}
			if !tc.created {
				if tc.code != kerr.TopicAlreadyExists.Code && b.hasTopic(st.Topic) {
					t.Errorf("%s v%d: topic was created", tc.name, v)
				}
				continue
			}
			live, ok := b.log.Topic(st.Topic)
			if !ok || int32(len(live.Partitions())) != tc.parts {
				t.Fatalf("%s v%d: topic %s exists %v", tc.name, v, st.Topic, ok)
			}
			if v >= 5 && (st.NumPartitions != tc.parts || st.ReplicationFactor != 1 || len(st.Configs) == 0) {
				t.Errorf("%s v%d: answered %d partitions, rf %d, %d configs", tc.name, v, st.NumPartitions, st.ReplicationFactor, len(st.Configs))
			}
			if v >= 7 && st.TopicID != live.ID {
				t.Errorf("%s v%d: topic id %x, log has %x", tc.name, v, st.TopicID, live.ID)
			}
		}
	}
}

// TestCreateTopicsExistsMessage: the message of TOPIC_ALREADY_EXISTS is
// Kafka's, which kafka-topics prints as it is.
func TestCreateTopicsExistsMessage(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("existing", 1, nil)
	c := b.dial()
	for _, validateOnly := range []bool{false, true} {
		st := roundTrip[*kmsg.CreateTopicsResponse](c, createTopicsReq(7, validateOnly, newTopicReq("existing", 1, 1))).Topics[0]
		wantCode(t, "existing topic", st.ErrorCode, kerr.TopicAlreadyExists.Code)
		if got := st.ErrorMessage; got == nil || *got != "Topic 'existing' already exists." {
			t.Errorf("validate_only %v: message %v, want Kafka's \"Topic 'existing' already exists.\"", validateOnly, errorText(got))
		}
	}
}

func errorText(msg *string) string {
	if msg == nil {
		return "null"
	}
	return *msg
}

func TestCreateTopicsConfigsInAnswer(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := b.dial()
	resp := roundTrip[*kmsg.CreateTopicsResponse](c, createTopicsReq(5, false, newTopicReq("cfg", 1, 1, "retention.ms", "1234")))
	wantCode(t, "create", resp.Topics[0].ErrorCode, 0)
	found := map[string]kmsg.CreateTopicsResponseTopicConfig{}
	for _, cfg := range resp.Topics[0].Configs {
		found[cfg.Name] = cfg
	}
	if r := found["retention.ms"]; r.Value == nil || *r.Value != "1234" || r.Source != int8(kmsg.ConfigSourceDynamicTopicConfig) {
		t.Errorf("retention.ms answered as %+v", r)
	}
	if m := found["max.message.bytes"]; m.Value == nil || *m.Value != "1048588" || m.Source != int8(kmsg.ConfigSourceDefaultConfig) {
		t.Errorf("max.message.bytes answered as %+v", m)
	}
}

func TestCreateTopicsValidateOnly(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := b.dial()
	for _, v := range []int16{1, 5, 7} {
		resp := roundTrip[*kmsg.CreateTopicsResponse](c, createTopicsReq(v, true,
			newTopicReq("dry", 2, 1, "retention.ms", "1000"), newTopicReq("dry-bad", 2, 1, "retention.ms", "x")))
		wantCode(t, "validate-only good", resp.Topics[0].ErrorCode, 0)
		wantCode(t, "validate-only bad", resp.Topics[1].ErrorCode, kerr.InvalidConfig.Code)
		if v >= 5 && resp.Topics[0].NumPartitions != 2 {
			t.Errorf("v%d: validate-only answered %d partitions", v, resp.Topics[0].NumPartitions)
		}
		if resp.Topics[0].TopicID != [16]byte{} {
			t.Errorf("v%d: validate-only answered a topic id", v)
		}
		if b.hasTopic("dry") || b.hasTopic("dry-bad") {
			t.Fatalf("v%d: validate-only created a topic", v)
		}
	}
}

func TestCreateTopicsDuplicateNames(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := b.dial()
	resp := roundTrip[*kmsg.CreateTopicsResponse](c, createTopicsReq(4, false,
		newTopicReq("twice", 1, 1), newTopicReq("once", 1, 1), newTopicReq("twice", 2, 1)))
	// Kafka answers each name once: the others first, then the
	// duplicated ones.
	if len(resp.Topics) != 2 || resp.Topics[0].Topic != "once" || resp.Topics[1].Topic != "twice" {
		t.Fatalf("answers %+v, want once then twice", resp.Topics)
	}
	wantCode(t, "once", resp.Topics[0].ErrorCode, 0)
	wantCode(t, "twice", resp.Topics[1].ErrorCode, kerr.InvalidRequest.Code)
	if b.hasTopic("twice") || !b.hasTopic("once") {
		t.Fatalf("twice exists %v, once exists %v", b.hasTopic("twice"), b.hasTopic("once"))
	}
}
