package protocol

import (
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// incOp is one IncrementalAlterConfigs operation; a nil value is null.
type incOp struct {
	op    kmsg.IncrementalAlterConfigOp
	name  string
	value *string
}

func set(name, value string) incOp { return incOp{kmsg.IncrementalAlterConfigOpSet, name, &value} }

func incAlterReq(version int16, validateOnly bool, typ kmsg.ConfigResourceType, name string, ops ...incOp) *kmsg.IncrementalAlterConfigsRequest {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.Version, req.ValidateOnly = version, validateOnly
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = typ, name
	for _, o := range ops {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op, c.Value = o.name, o.op, o.value
		rr.Configs = append(rr.Configs, c)
	}
	req.Resources = append(req.Resources, rr)
	return req
}

func incAlterOne(t testing.TB, c *rawClient, req *kmsg.IncrementalAlterConfigsRequest) kmsg.IncrementalAlterConfigsResponseResource {
	t.Helper()
	resp := roundTrip[*kmsg.IncrementalAlterConfigsResponse](c, req)
	if len(resp.Resources) != 1 {
		t.Fatalf("%d resources answered", len(resp.Resources))
	}
	return resp.Resources[0]
}

func TestIncrementalAlterTopicConfigs(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("inc", 1, nil)
	c := b.dial()
	const (
		set_     = kmsg.IncrementalAlterConfigOpSet
		del      = kmsg.IncrementalAlterConfigOpDelete
		appendOp = kmsg.IncrementalAlterConfigOpAppend
		subtract = kmsg.IncrementalAlterConfigOpSubtract
	)
	steps := []struct {
		name         string
		validateOnly bool
		ops          []incOp
		code         int16
		retention    string
		cleanup      string
	}{
		{"validate only", true, []incOp{set("retention.ms", "1000")}, 0, "604800000", "delete"},
		{"set", false, []incOp{set("retention.ms", "1000")}, 0, "1000", "delete"},
		{"set keeps others", false, []incOp{set("max.message.bytes", "5000")}, 0, "1000", "delete"},
		{"append to the default", false, []incOp{{appendOp, "cleanup.policy", ptr("compact")}}, 0, "1000", "delete,compact"},
		{"append present", false, []incOp{{appendOp, "cleanup.policy", ptr("compact")}}, 0, "1000", "delete,compact"},
		{"subtract", false, []incOp{{subtract, "cleanup.policy", ptr("delete")}}, 0, "1000", "compact"},
		{"append to a long", false, []incOp{{appendOp, "retention.ms", ptr("5")}}, kerr.InvalidConfig.Code, "1000", "compact"},
		{"subtract from a long", false, []incOp{{subtract, "retention.ms", ptr("5")}}, kerr.InvalidConfig.Code, "1000", "compact"},
		{"bad value", false, []incOp{set("retention.ms", "-7")}, kerr.InvalidConfig.Code, "1000", "compact"},
		{"unknown config", false, []incOp{set("no.such", "1")}, kerr.InvalidConfig.Code, "1000", "compact"},
		{"bad value is atomic", false, []incOp{set("cleanup.policy", "delete"), set("retention.ms", "x")}, kerr.InvalidConfig.Code, "1000", "compact"},
		{"duplicate", false, []incOp{set("retention.ms", "1"), {del, "retention.ms", nil}}, kerr.InvalidRequest.Code, "1000", "compact"},
		{"null set", false, []incOp{{set_, "retention.ms", nil}}, kerr.InvalidRequest.Code, "1000", "compact"},
		{"null append", false, []incOp{{appendOp, "cleanup.policy", nil}}, kerr.InvalidRequest.Code, "1000", "compact"},
		{"validate only delete", true, []incOp{{del, "retention.ms", nil}}, 0, "1000", "compact"},
		{"delete", false, []incOp{{del, "retention.ms", nil}, {del, "cleanup.policy", nil}}, 0, "604800000", "delete"},
		{"unknown op", false, []incOp{{9, "retention.ms", ptr("1")}}, kerr.InvalidConfig.Code, "604800000", "delete"},
	}
	for i, s := range steps {
		res := incAlterOne(t, c, incAlterReq(int16(i%2), s.validateOnly, kmsg.ConfigResourceTypeTopic, "inc", s.ops...))
		wantCode(t, s.name, res.ErrorCode, s.code)
		if s.code != 0 && (res.ErrorMessage == nil || *res.ErrorMessage == "") {
			t.Errorf("%s: no error message", s.name)
		}
		if got, _ := topicConfig(t, c, "inc", "retention.ms"); got != s.retention {
			t.Errorf("%s: retention.ms %s, want %s", s.name, got, s.retention)
		}
		if got, _ := topicConfig(t, c, "inc", "cleanup.policy"); got != s.cleanup {
			t.Errorf("%s: cleanup.policy %s, want %s", s.name, got, s.cleanup)
		}
	}
	if got, src := topicConfig(t, c, "inc", "max.message.bytes"); got != "5000" || src != kmsg.ConfigSourceDynamicTopicConfig {
		t.Errorf("max.message.bytes %s (source %v) after the other changes", got, src)
	}
	res := incAlterOne(t, c, incAlterReq(1, false, kmsg.ConfigResourceTypeTopic, "nope", set("retention.ms", "1")))
	wantCode(t, "unknown topic", res.ErrorCode, kerr.UnknownTopicOrPartition.Code)
}

func TestIncrementalAlterBrokerConfigs(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("inherits", 1, nil)
	c := b.dial()
	broker := kmsg.ConfigResourceTypeBroker
	res := incAlterOne(t, c, incAlterReq(1, false, broker, "0", set("auto.create.topics.enable", "false")))
	wantCode(t, "disable auto-create", res.ErrorCode, 0)
	md := roundTrip[*kmsg.MetadataResponse](c, metadataReq(3, true, "not-created"))
	wantCode(t, "metadata after disabling auto-create", md.Topics[0].ErrorCode, kerr.UnknownTopicOrPartition.Code)

	res = incAlterOne(t, c, incAlterReq(1, false, broker, "", set("log.retention.ms", "42")))
	wantCode(t, "broker default", res.ErrorCode, 0)
	if got, src := topicConfig(t, c, "inherits", "retention.ms"); got != "42" || src != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Errorf("topic retention.ms %s (source %v) after log.retention.ms=42", got, src)
	}
	res = incAlterOne(t, c, incAlterReq(1, false, broker, "", set("default.replication.factor", "3")))
	wantCode(t, "read-only broker config", res.ErrorCode, kerr.InvalidConfig.Code)
	res = incAlterOne(t, c, incAlterReq(1, false, broker, "9", set("log.retention.ms", "1")))
	wantCode(t, "another broker", res.ErrorCode, kerr.InvalidRequest.Code)
	res = incAlterOne(t, c, incAlterReq(1, false, broker, "", incOp{kmsg.IncrementalAlterConfigOpDelete, "auto.create.topics.enable", nil}))
	wantCode(t, "delete back to default", res.ErrorCode, 0)
	md = roundTrip[*kmsg.MetadataResponse](c, metadataReq(3, true, "created"))
	wantCode(t, "metadata after re-enabling auto-create", md.Topics[0].ErrorCode, 0)
}

// TestConfigsChangeBehaviour checks that altered configs act on produce
// and fetch, not just on DescribeConfigs.
func TestConfigsChangeBehaviour(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("limited", 1, nil)
	b.createTopic("stamped", 1, nil)
	c := b.dial()
	big := plainBatch(1, 500, 1000).build(t)
	c.mustProduce("limited", 0, big)
	res := incAlterOne(t, c, incAlterReq(1, false, kmsg.ConfigResourceTypeTopic, "limited", set("max.message.bytes", "200")))
	wantCode(t, "set max.message.bytes", res.ErrorCode, 0)
	p := c.produce("limited", 0, plainBatch(1, 500, 1000).build(t))
	wantCode(t, "batch over max.message.bytes", p.ErrorCode, kerr.MessageTooLarge.Code)
	c.mustProduce("limited", 0, plainBatch(1, 10, 1000).build(t))

	// LogAppendTime: the broker stamps the batch, answers the stamp in
	// the produce response and serves the batch with the attribute bit.
	const createTime = 1_000
	p = c.produce("stamped", 0, plainBatch(2, 10, createTime).build(t))
	wantCode(t, "produce CreateTime", p.ErrorCode, 0)
	if p.LogAppendTime != -1 {
		t.Errorf("CreateTime topic answered log append time %d", p.LogAppendTime)
	}
	alter := alterConfigsReq(0, false, kmsg.ConfigResourceTypeTopic, "stamped", "message.timestamp.type", "LogAppendTime")
	wantCode(t, "set LogAppendTime", alterOne(t, c, alter).ErrorCode, 0)
	p = c.produce("stamped", 0, plainBatch(2, 10, createTime).build(t))
	wantCode(t, "produce LogAppendTime", p.ErrorCode, 0)
	if p.LogAppendTime <= createTime {
		t.Fatalf("log append time %d in the produce answer", p.LogAppendTime)
	}
	fetched := c.fetchOne(fetchReq(11, "stamped", [16]byte{}, 0, 0))
	batches := splitFetched(t, fetched.RecordBatches)
	if len(batches) != 2 {
		t.Fatalf("fetched %d batches, want 2", len(batches))
	}
	for i, raw := range batches {
		attrs := binary.BigEndian.Uint16(raw[21:])
		maxTS := int64(binary.BigEndian.Uint64(raw[35:]))
		stamped := attrs&0x08 != 0
		if stamped != (i == 1) {
			t.Errorf("batch %d: LogAppendTime bit %v", i, stamped)
		}
		if i == 1 && maxTS != p.LogAppendTime {
			t.Errorf("stamped batch max timestamp %d, produce answered %d", maxTS, p.LogAppendTime)
		}
		if !batchCRCOK(raw) {
			t.Errorf("batch %d: CRC does not match after stamping", i)
		}
	}
}
