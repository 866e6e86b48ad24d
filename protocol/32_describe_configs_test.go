package protocol

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func describeConfigsReq(version int16, typ kmsg.ConfigResourceType, name string, configNames ...string) *kmsg.DescribeConfigsRequest {
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.Version = version
	req.IncludeSynonyms, req.IncludeDocumentation = version >= 1, version >= 3
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.ConfigNames = typ, name, configNames
	req.Resources = append(req.Resources, rr)
	return req
}

// describeOne describes one resource and returns its configs by name.
func describeOne(t testing.TB, c *rawClient, req *kmsg.DescribeConfigsRequest) map[string]kmsg.DescribeConfigsResponseResourceConfig {
	t.Helper()
	resp := roundTrip[*kmsg.DescribeConfigsResponse](c, req)
	if len(resp.Resources) != 1 {
		t.Fatalf("%d resources answered", len(resp.Resources))
	}
	wantCode(t, "describe "+resp.Resources[0].ResourceName, resp.Resources[0].ErrorCode, 0)
	out := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	for _, cfg := range resp.Resources[0].Configs {
		out[cfg.Name] = cfg
	}
	return out
}

// topicConfig returns a topic config's effective value as described.
func topicConfig(t testing.TB, c *rawClient, topic, name string) (string, kmsg.ConfigSource) {
	t.Helper()
	cfg, ok := describeOne(t, c, describeConfigsReq(4, kmsg.ConfigResourceTypeTopic, topic, name))[name]
	if !ok || cfg.Value == nil {
		t.Fatalf("%s: %s not described", topic, name)
	}
	return *cfg.Value, cfg.Source
}

type synonym struct {
	name, value string
	source      kmsg.ConfigSource
}

func synonymsOf(cfg kmsg.DescribeConfigsResponseResourceConfig) []synonym {
	var out []synonym
	for _, s := range cfg.ConfigSynonyms {
		v := "<null>"
		if s.Value != nil {
			v = *s.Value
		}
		out = append(out, synonym{s.Name, v, s.Source})
	}
	return out
}

func TestDescribeTopicConfigs(t *testing.T) {
	t.Parallel()
	b := startBroker(t, withBrokerConfig("log.retention.ms", "5000"))
	b.createTopic("described", 1, map[string]string{"max.message.bytes": "2000"})
	c := b.dial()
	cases := []struct {
		name     string
		config   string
		value    string
		source   kmsg.ConfigSource
		synonyms []synonym
	}{
		{"set on the topic", "max.message.bytes", "2000", kmsg.ConfigSourceDynamicTopicConfig, []synonym{
			{"max.message.bytes", "2000", kmsg.ConfigSourceDynamicTopicConfig},
			{"message.max.bytes", "1048588", kmsg.ConfigSourceDefaultConfig}}},
		{"dynamic broker default", "retention.ms", "5000", kmsg.ConfigSourceDynamicDefaultBrokerConfig, []synonym{
			{"log.retention.ms", "5000", kmsg.ConfigSourceDynamicDefaultBrokerConfig},
			{"log.retention.ms", "604800000", kmsg.ConfigSourceDefaultConfig}}},
		{"built-in default", "cleanup.policy", "delete", kmsg.ConfigSourceDefaultConfig, []synonym{
			{"log.cleanup.policy", "delete", kmsg.ConfigSourceDefaultConfig}}},
	}
	for _, v := range []int16{0, 1, 2, 3, 4} {
		configs := describeOne(t, c, describeConfigsReq(v, kmsg.ConfigResourceTypeTopic, "described"))
		for _, tc := range cases {
			cfg, ok := configs[tc.config]
			if !ok || cfg.Value == nil || *cfg.Value != tc.value {
				t.Errorf("v%d %s: %s = %v", v, tc.name, tc.config, cfg.Value)
				continue
			}
			if v == 0 && cfg.IsDefault != (tc.source == kmsg.ConfigSourceDefaultConfig) {
				t.Errorf("v0 %s: is_default %v", tc.name, cfg.IsDefault)
			}
			if v >= 1 && cfg.Source != tc.source {
				t.Errorf("v%d %s: source %v, want %v", v, tc.name, cfg.Source, tc.source)
			}
			if got := synonymsOf(cfg); v >= 1 && !equalSynonyms(got, tc.synonyms) {
				t.Errorf("v%d %s: synonyms %v, want %v", v, tc.name, got, tc.synonyms)
			}
			if v >= 3 && (cfg.Documentation == nil || *cfg.Documentation == "" || cfg.ConfigType == 0) {
				t.Errorf("v%d %s: documentation %v, type %v", v, tc.name, cfg.Documentation, cfg.ConfigType)
			}
		}
		if cfg := configs["retention.ms"]; v >= 3 && cfg.ConfigType != kmsg.ConfigTypeLong {
			t.Errorf("v%d: retention.ms has type %v", v, cfg.ConfigType)
		}
	}
	// Documentation only when asked for.
	req := describeConfigsReq(4, kmsg.ConfigResourceTypeTopic, "described", "retention.ms")
	req.IncludeDocumentation, req.IncludeSynonyms = false, false
	cfg := describeOne(t, c, req)
	if len(cfg) != 1 || cfg["retention.ms"].Documentation != nil || len(cfg["retention.ms"].ConfigSynonyms) != 0 {
		t.Errorf("names filter or include flags ignored: %+v", cfg)
	}
}

func equalSynonyms(a, b []synonym) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestDescribeBrokerConfigs(t *testing.T) {
	t.Parallel()
	b := startBroker(t, withBrokerConfig("num.partitions", "6"))
	c := b.dial()
	for _, name := range []string{"", "0"} {
		for _, v := range []int16{0, 1, 4} {
			configs := describeOne(t, c, describeConfigsReq(v, kmsg.ConfigResourceTypeBroker, name))
			np := configs["num.partitions"]
			if np.Value == nil || *np.Value != "6" || (v >= 1 && np.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig) {
				t.Errorf("broker %q v%d: num.partitions %v source %v", name, v, np.Value, np.Source)
			}
			if id := configs["broker.id"]; id.Value == nil || *id.Value != "0" || !id.ReadOnly {
				t.Errorf("broker %q v%d: broker.id %+v", name, v, id)
			}
			if ac := configs["auto.create.topics.enable"]; ac.Value == nil || *ac.Value != "true" {
				t.Errorf("broker %q v%d: auto.create.topics.enable %v", name, v, ac.Value)
			}
			// Kafka defines default.replication.factor as an INT (a
			// topic's replication factor is a short on the wire).
			if rf := configs["default.replication.factor"]; v >= 3 && rf.ConfigType != kmsg.ConfigTypeInt {
				t.Errorf("broker %q v%d: default.replication.factor type %v, want INT", name, v, rf.ConfigType)
			}
		}
	}
}

func TestDescribeConfigsErrors(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := b.dial()
	cases := []struct {
		name string
		typ  kmsg.ConfigResourceType
		res  string
		code int16
	}{
		{"unknown topic", kmsg.ConfigResourceTypeTopic, "nope", kerr.UnknownTopicOrPartition.Code},
		{"another broker", kmsg.ConfigResourceTypeBroker, "7", kerr.InvalidRequest.Code},
		{"broker logger", kmsg.ConfigResourceTypeBrokerLogger, "0", kerr.InvalidRequest.Code},
	}
	for _, tc := range cases {
		resp := roundTrip[*kmsg.DescribeConfigsResponse](c, describeConfigsReq(4, tc.typ, tc.res))
		wantCode(t, tc.name, resp.Resources[0].ErrorCode, tc.code)
		if resp.Resources[0].ResourceName != tc.res || resp.Resources[0].ResourceType != tc.typ {
			t.Errorf("%s: answered for %v %q", tc.name, resp.Resources[0].ResourceType, resp.Resources[0].ResourceName)
		}
	}
}
