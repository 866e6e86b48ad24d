//go:build interop

package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestInteropDiffCreateTopics: CreateTopics with every kind of bad input
// (names, partitions, replication factor, unknown config, bad value, an
// existing topic, a duplicate in one request) and validate-only.
func TestInteropDiffCreateTopics(t *testing.T) {
	d := newDiffRun(t)
	topic := diffTopic(t, "c")
	create := func(step, name string, partitions int32, replication int16, configs ...string) {
		d.same(step, func() kmsg.Request { return createTopicReq(name, partitions, replication, configs...) })
	}
	create("CreateTopics", topic, 2, 1, "retention.ms", "3600000")
	d.waitTopics(topic)
	create("CreateTopics existing", topic, 2, 1)
	create("CreateTopics defaults", diffTopic(t, "defaults"), -1, -1)
	create("CreateTopics invalid name", "bad name!", 1, 1)
	create("CreateTopics name dot", ".", 1, 1)
	create("CreateTopics name too long", strings.Repeat("n", 250), 1, 1)
	create("CreateTopics empty name", "", 1, 1)
	create("CreateTopics zero partitions", diffTopic(t, "p0"), 0, 1)
	create("CreateTopics negative partitions", diffTopic(t, "pneg"), -5, 1)
	create("CreateTopics replication 3", diffTopic(t, "r3"), 1, 3)
	create("CreateTopics replication 0", diffTopic(t, "r0"), 1, 0)
	create("CreateTopics unknown config", diffTopic(t, "unknown"), 1, 1, "no.such.config", "1")
	create("CreateTopics bad number", diffTopic(t, "badnum"), 1, 1, "retention.ms", "soon")
	create("CreateTopics bad enum", diffTopic(t, "badenum"), 1, 1, "cleanup.policy", "sometimes")
	create("CreateTopics below minimum", diffTopic(t, "min"), 1, 1, "retention.ms", "-7")
	create("CreateTopics bad timestamp type", diffTopic(t, "tstype"), 1, 1, "message.timestamp.type", "Now")
	d.same("CreateTopics duplicate in request", func() kmsg.Request {
		req := createTopicReq(diffTopic(t, "dup"), 1, 1)
		req.Topics = append(req.Topics, req.Topics[0])
		return req
	})
	d.same("CreateTopics validate only", func() kmsg.Request {
		req := createTopicReq(diffTopic(t, "validate"), 3, 1, "max.message.bytes", "5000")
		req.ValidateOnly = true
		return req
	})
	d.same("Metadata after validate only", func() kmsg.Request { return metadataReq(vMetadata, false, diffTopic(t, "validate")) })
}

// TestInteropDiffDescribeConfigs: DescribeConfigs of a topic with one
// config set (value, source, synonyms, read-only and sensitive flags, type),
// of an unknown topic, and of the broker.
func TestInteropDiffDescribeConfigs(t *testing.T) {
	d := newDiffRun(t)
	topic := diffTopic(t, "d")
	d.same("CreateTopics", func() kmsg.Request {
		return createTopicReq(topic, 1, 1, "retention.ms", "3600000", "cleanup.policy", "delete")
	})
	d.waitTopics(topic)
	names := []string{"retention.ms", "retention.bytes", "max.message.bytes", "cleanup.policy", "message.timestamp.type",
		"segment.bytes", "segment.ms", "min.insync.replicas", "compression.type", "unclean.leader.election.enable"}
	d.same("DescribeConfigs topic named", func() kmsg.Request { return describeConfigsReq(kmsg.ConfigResourceTypeTopic, topic, names...) })
	d.same("DescribeConfigs topic all", func() kmsg.Request { return describeConfigsReq(kmsg.ConfigResourceTypeTopic, topic) })
	d.same("DescribeConfigs topic unknown name", func() kmsg.Request {
		return describeConfigsReq(kmsg.ConfigResourceTypeTopic, topic, "no.such.config")
	})
	d.same("DescribeConfigs unknown topic", func() kmsg.Request {
		return describeConfigsReq(kmsg.ConfigResourceTypeTopic, diffTopic(t, "none"))
	})
	broker := []string{"auto.create.topics.enable", "num.partitions", "default.replication.factor", "message.max.bytes",
		"log.retention.ms", "log.retention.bytes", "log.cleanup.policy", "log.message.timestamp.type", "min.insync.replicas",
		"log.segment.bytes", "log.roll.ms", "unclean.leader.election.enable", "producer.id.expiration.ms", "compression.type"}
	d.exchange("DescribeConfigs broker", func(s *diffSide) kmsg.Request {
		return describeConfigsReq(kmsg.ConfigResourceTypeBroker, strconv.Itoa(int(s.nodeID())), broker...)
	})
}

// nodeID is the broker's node id: Sediment's default 0, the reference's 1.
func (s *diffSide) nodeID() int32 {
	if s.name == "kafka" {
		return 1
	}
	return 0
}

// TestInteropDiffAlterConfigs: IncrementalAlterConfigs on a topic (set,
// delete, append and subtract on a list, an unknown config, a bad value,
// an unknown topic, validate-only) and what DescribeConfigs says after,
// with and without synonyms and documentation.
func TestInteropDiffAlterConfigs(t *testing.T) {
	d := newDiffRun(t)
	topic := diffTopic(t, "a")
	d.same("CreateTopics", func() kmsg.Request { return createTopicReq(topic, 1, 1, "retention.bytes", "1000000") })
	d.waitTopics(topic)
	alter := func(step, name string, validate bool, ops ...alterOp) {
		d.same(step, func() kmsg.Request { return incAlterReq(name, validate, ops...) })
	}
	alter("IncrementalAlterConfigs set", topic, false, alterOp{"retention.ms", 0, "7200000"}, alterOp{"max.message.bytes", 0, "50000"})
	alter("IncrementalAlterConfigs delete", topic, false, alterOp{"retention.bytes", 1, ""})
	alter("IncrementalAlterConfigs append", topic, false, alterOp{"cleanup.policy", 2, "compact"})
	alter("IncrementalAlterConfigs subtract", topic, false, alterOp{"cleanup.policy", 3, "compact"})
	alter("IncrementalAlterConfigs append to a non-list", topic, false, alterOp{"retention.ms", 2, "5"})
	alter("IncrementalAlterConfigs unknown config", topic, false, alterOp{"no.such.config", 0, "1"})
	alter("IncrementalAlterConfigs bad value", topic, false, alterOp{"retention.ms", 0, "soon"})
	alter("IncrementalAlterConfigs unknown topic", diffTopic(t, "none"), false, alterOp{"retention.ms", 0, "1"})
	alter("IncrementalAlterConfigs validate only", topic, true, alterOp{"segment.bytes", 0, "1048576"})
	names := []string{"retention.ms", "retention.bytes", "max.message.bytes", "cleanup.policy", "segment.bytes"}
	d.same("DescribeConfigs after alter", func() kmsg.Request { return describeConfigsReq(kmsg.ConfigResourceTypeTopic, topic, names...) })
	d.same("DescribeConfigs without synonyms or documentation", func() kmsg.Request {
		req := describeConfigsReq(kmsg.ConfigResourceTypeTopic, topic, names...)
		req.IncludeSynonyms, req.IncludeDocumentation = false, false
		return req
	})
}

// alterOp is one IncrementalAlterConfigs operation: 0 set, 1 delete, 2
// append, 3 subtract.
type alterOp struct {
	name  string
	op    int8
	value string
}

func incAlterReq(topic string, validate bool, ops ...alterOp) *kmsg.IncrementalAlterConfigsRequest {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.SetVersion(1)
	req.ValidateOnly = validate
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	for _, o := range ops {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op = o.name, kmsg.IncrementalAlterConfigOp(o.op)
		if o.op != 1 {
			c.Value = kmsg.StringPtr(o.value)
		}
		rr.Configs = append(rr.Configs, c)
	}
	req.Resources = append(req.Resources, rr)
	return req
}
