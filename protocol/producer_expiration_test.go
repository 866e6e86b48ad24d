package protocol

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestProducerIDExpirationConfig: producer.id.expiration.ms is a dynamic
// broker config: described with its default, refused with a message naming
// it when bad, and, once altered, expiring idle producers on the next
// produce.
func TestProducerIDExpirationConfig(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	b.createTopic("idem", 1, nil)
	c := b.dial()
	const name = "producer.id.expiration.ms"
	broker := kmsg.ConfigResourceTypeBroker
	describe := func() (string, kmsg.ConfigSource) {
		cfg, ok := describeOne(t, c, describeConfigsReq(4, broker, "0"))[name]
		if !ok || cfg.Value == nil {
			t.Fatalf("%s not described", name)
		}
		return *cfg.Value, cfg.Source
	}
	if v, src := describe(); v != "86400000" || src != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("%s = %s (source %v), want the default 86400000", name, v, src)
	}
	for _, bad := range []string{"0", "-1", "a day"} {
		res := incAlterOne(t, c, incAlterReq(1, false, broker, "", set(name, bad)))
		wantCode(t, name+"="+bad, res.ErrorCode, kerr.InvalidConfig.Code)
		if res.ErrorMessage == nil || !strings.Contains(*res.ErrorMessage, name) {
			t.Errorf("%s=%s: error message %v does not name the config", name, bad, res.ErrorMessage)
		}
	}
	if p := c.produce("idem", 0, idempotentBatch(t, 5, 0, 0, 1)); p.ErrorCode != 0 {
		t.Fatalf("first idempotent produce: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	gap := idempotentBatch(t, 5, 0, 7, 1)
	wantCode(t, "sequence gap of a known producer", c.produce("idem", 0, gap).ErrorCode, kerr.OutOfOrderSequenceNumber.Code)

	res := incAlterOne(t, c, incAlterReq(1, false, broker, "", set(name, "1")))
	wantCode(t, name+"=1", res.ErrorCode, 0)
	if v, src := describe(); v != "1" || src != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Fatalf("%s = %s (source %v) after setting it to 1", name, v, src)
	}
	time.Sleep(5 * time.Millisecond) // the producer is now idle past 1 ms
	// Kafka accepts any sequence from a producer it has no state for.
	wantCode(t, "sequence gap of an expired producer", c.produce("idem", 0, gap).ErrorCode, 0)
}
