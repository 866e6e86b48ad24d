package protocol

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// alterConfigsReq builds a legacy AlterConfigs request for one resource;
// kv alternates name, value ("<null>" for a null value).
func alterConfigsReq(version int16, validateOnly bool, typ kmsg.ConfigResourceType, name string, kv ...string) *kmsg.AlterConfigsRequest {
	req := kmsg.NewPtrAlterConfigsRequest()
	req.Version, req.ValidateOnly = version, validateOnly
	rr := kmsg.NewAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = typ, name
	for i := 0; i+1 < len(kv); i += 2 {
		c := kmsg.NewAlterConfigsRequestResourceConfig()
		c.Name = kv[i]
		if kv[i+1] != "<null>" {
			c.Value = ptr(kv[i+1])
		}
		rr.Configs = append(rr.Configs, c)
	}
	req.Resources = append(req.Resources, rr)
	return req
}

func alterOne(t testing.TB, c *rawClient, req *kmsg.AlterConfigsRequest) kmsg.AlterConfigsResponseResource {
	t.Helper()
	resp := roundTrip[*kmsg.AlterConfigsResponse](c, req)
	if len(resp.Resources) != 1 {
		t.Fatalf("%d resources answered", len(resp.Resources))
	}
	return resp.Resources[0]
}

func TestAlterConfigsReplacesTopicConfigs(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("legacy", 1, map[string]string{"cleanup.policy": "compact"})
	c := b.dial()
	topic := kmsg.ConfigResourceTypeTopic
	steps := []struct {
		name         string
		validateOnly bool
		kv           []string
		code         int16
		retention    string // retention.ms afterwards
		cleanup      string // cleanup.policy afterwards
	}{
		{"validate only", true, []string{"retention.ms", "1000"}, 0, "604800000", "compact"},
		{"set replaces all", false, []string{"retention.ms", "1000"}, 0, "1000", "delete"},
		{"bad value", false, []string{"retention.ms", "soon"}, kerr.InvalidConfig.Code, "1000", "delete"},
		{"unknown config", false, []string{"nope.ms", "1"}, kerr.InvalidConfig.Code, "1000", "delete"},
		{"null value", false, []string{"retention.ms", "<null>"}, kerr.InvalidRequest.Code, "1000", "delete"},
		{"duplicate", false, []string{"retention.ms", "1", "retention.ms", "2"}, kerr.InvalidRequest.Code, "1000", "delete"},
		{"validate only bad", true, []string{"cleanup.policy", "shred"}, kerr.InvalidConfig.Code, "1000", "delete"},
		{"set another", false, []string{"cleanup.policy", "compact,delete"}, 0, "604800000", "compact,delete"},
		{"empty resets", false, nil, 0, "604800000", "delete"},
	}
	for i, s := range steps {
		v := int16(i % 3)
		res := alterOne(t, c, alterConfigsReq(v, s.validateOnly, topic, "legacy", s.kv...))
		wantCode(t, s.name, res.ErrorCode, s.code)
		if s.code != 0 && (res.ErrorMessage == nil || *res.ErrorMessage == "") {
			t.Errorf("%s: no error message", s.name)
		}
		if got, _ := topicConfig(t, c, "legacy", "retention.ms"); got != s.retention {
			t.Errorf("%s: retention.ms %s, want %s", s.name, got, s.retention)
		}
		if got, _ := topicConfig(t, c, "legacy", "cleanup.policy"); got != s.cleanup {
			t.Errorf("%s: cleanup.policy %s, want %s", s.name, got, s.cleanup)
		}
	}
	res := alterOne(t, c, alterConfigsReq(1, false, topic, "nope", "retention.ms", "1"))
	wantCode(t, "unknown topic", res.ErrorCode, kerr.UnknownTopicOrPartition.Code)
}

func TestAlterConfigsBroker(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := b.dial()
	broker := kmsg.ConfigResourceTypeBroker
	res := alterOne(t, c, alterConfigsReq(2, false, broker, "", "num.partitions", "2"))
	wantCode(t, "set num.partitions", res.ErrorCode, 0)
	md := roundTrip[*kmsg.MetadataResponse](c, metadataReq(1, true, "auto-two"))
	if len(md.Topics[0].Partitions) != 2 {
		t.Fatalf("auto-created topic has %d partitions after num.partitions=2", len(md.Topics[0].Partitions))
	}
	res = alterOne(t, c, alterConfigsReq(2, false, broker, "3", "num.partitions", "5"))
	wantCode(t, "another broker", res.ErrorCode, kerr.InvalidRequest.Code)
	res = alterOne(t, c, alterConfigsReq(2, false, broker, "0", "num.partitions", "0"))
	wantCode(t, "below minimum", res.ErrorCode, kerr.InvalidConfig.Code)
	configs := describeOne(t, c, describeConfigsReq(1, broker, "0", "num.partitions"))
	if v := configs["num.partitions"].Value; v == nil || *v != "2" {
		t.Fatalf("num.partitions is %v after rejected changes", v)
	}
}
