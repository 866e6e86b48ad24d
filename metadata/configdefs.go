package metadata

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ConfigType is a config's value type as DescribeConfigs v3+ reports it.
type ConfigType int8

// Config types, numbered as Kafka's DescribeConfigs ConfigType.
const (
	ConfigBoolean  ConfigType = 1
	ConfigString   ConfigType = 2
	ConfigInt      ConfigType = 3
	ConfigShort    ConfigType = 4
	ConfigLong     ConfigType = 5
	ConfigDouble   ConfigType = 6
	ConfigList     ConfigType = 7
	ConfigPassword ConfigType = 9
)

// ConfigDef describes one topic or broker config.
type ConfigDef struct {
	Name    string
	Type    ConfigType
	Default string
	// BrokerName is, for a topic config, the broker config that supplies
	// its default (log.retention.ms for retention.ms).
	BrokerName string
	// Min bounds numeric values from below.
	Min int64
	// Enum lists the allowed values of a string config (nil: any).
	Enum []string
	// ReadOnly marks broker configs that cannot be altered at runtime.
	ReadOnly bool
	// Check, when set, validates what the type and Enum cannot (the syntax
	// of sediment.table.partition-by, ...).
	Check func(value string) error
	// Effect says what Sediment does with the value, for the docs.
	Doc string
}

// Validate checks value against the definition and names the config in the
// error.
func (d ConfigDef) Validate(value string) error {
	switch d.Type {
	case ConfigBoolean:
		if value != "true" && value != "false" {
			return fmt.Errorf("config %s: %q is not true or false", d.Name, value)
		}
	case ConfigInt, ConfigLong, ConfigShort:
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return fmt.Errorf("config %s: %q is not an integer", d.Name, value)
		}
		if n < d.Min {
			return fmt.Errorf("config %s: %d is below the minimum %d", d.Name, n, d.Min)
		}
		if d.Type == ConfigInt && n > 1<<31-1 {
			return fmt.Errorf("config %s: %d does not fit in an int", d.Name, n)
		}
	}
	if d.Enum != nil {
		for _, v := range strings.Split(value, ",") {
			if !contains(d.Enum, strings.TrimSpace(v)) {
				return fmt.Errorf("config %s: %q is not one of %s", d.Name, value, strings.Join(d.Enum, ", "))
			}
		}
	}
	if d.Check != nil {
		if err := d.Check(value); err != nil {
			return fmt.Errorf("config %s: %w", d.Name, err)
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TopicConfigDefs are the topic-level configs Sediment accepts, by name:
// the log's below and the table converter's (tableTopicConfigDefs).
var TopicConfigDefs = byName(append([]ConfigDef{
	{Name: "cleanup.policy", Type: ConfigList, Default: "delete", BrokerName: "log.cleanup.policy", Enum: []string{"delete", "compact"},
		Doc: "delete applies retention; compact keeps every record (compaction itself is not implemented, nothing is deleted)"},
	{Name: "retention.ms", Type: ConfigLong, Default: "604800000", BrokerName: "log.retention.ms", Min: -1,
		Doc: "delete whole segments older than this; -1 keeps forever"},
	{Name: "retention.bytes", Type: ConfigLong, Default: "-1", BrokerName: "log.retention.bytes", Min: -1,
		Doc: "delete oldest segments beyond this many bytes per partition; -1 unbounded"},
	{Name: "max.message.bytes", Type: ConfigInt, Default: "1048588", BrokerName: "message.max.bytes", Min: 0,
		Doc: "largest record batch a producer may send"},
	{Name: "message.timestamp.type", Type: ConfigString, Default: "CreateTime", BrokerName: "log.message.timestamp.type",
		Enum: []string{"CreateTime", "LogAppendTime"}, Doc: "LogAppendTime makes the broker stamp batches on append"},
	{Name: "compression.type", Type: ConfigString, Default: "producer", BrokerName: "compression.type", Enum: []string{"producer"},
		Doc: "batches are stored as the producer compressed them; only producer is supported"},
	{Name: "min.insync.replicas", Type: ConfigInt, Default: "1", BrokerName: "min.insync.replicas", Min: 1,
		Doc: "accepted for compatibility: durability comes from the WAL and the object store"},
	{Name: "segment.bytes", Type: ConfigInt, Default: "1073741824", BrokerName: "log.segment.bytes", Min: 14,
		Doc: "accepted for compatibility: objects are cut by --upload-bytes and --upload-interval"},
	{Name: "segment.ms", Type: ConfigLong, Default: "604800000", BrokerName: "log.roll.ms", Min: 1,
		Doc: "accepted for compatibility: objects are cut by --upload-interval"},
	{Name: "unclean.leader.election.enable", Type: ConfigBoolean, Default: "false", BrokerName: "unclean.leader.election.enable",
		Doc: "accepted for compatibility: there are no replicas to elect"},
}, tableTopicConfigDefs...))

// BrokerConfigDefs are the broker-level configs, by name: the log's below
// and those of other components (groupBrokerConfigDefs, ...).
var BrokerConfigDefs = byName(append(logBrokerConfigDefs, groupBrokerConfigDefs...))

var logBrokerConfigDefs = []ConfigDef{
	{Name: "auto.create.topics.enable", Type: ConfigBoolean, Default: "true", Doc: "create unknown topics on Metadata requests"},
	{Name: "num.partitions", Type: ConfigInt, Default: "1", Min: 1, Doc: "partitions of auto-created topics and of CreateTopics with -1"},
	{Name: "default.replication.factor", Type: ConfigShort, Default: "1", Min: 1, ReadOnly: true, Doc: "reported only: the object store replicates"},
	{Name: "message.max.bytes", Type: ConfigInt, Default: "1048588", Min: 0, Doc: "default max.message.bytes"},
	{Name: "log.retention.ms", Type: ConfigLong, Default: "604800000", Min: -1, Doc: "default retention.ms"},
	{Name: "log.retention.bytes", Type: ConfigLong, Default: "-1", Min: -1, Doc: "default retention.bytes"},
	{Name: "log.cleanup.policy", Type: ConfigList, Default: "delete", Enum: []string{"delete", "compact"}, Doc: "default cleanup.policy"},
	{Name: "log.message.timestamp.type", Type: ConfigString, Default: "CreateTime", Enum: []string{"CreateTime", "LogAppendTime"},
		Doc: "default message.timestamp.type"},
	{Name: "compression.type", Type: ConfigString, Default: "producer", Enum: []string{"producer"}, Doc: "default compression.type"},
	{Name: "min.insync.replicas", Type: ConfigInt, Default: "1", Min: 1, Doc: "default min.insync.replicas"},
	{Name: "log.segment.bytes", Type: ConfigInt, Default: "1073741824", Min: 14, Doc: "default segment.bytes"},
	{Name: "log.roll.ms", Type: ConfigLong, Default: "604800000", Min: 1, Doc: "default segment.ms"},
	{Name: "unclean.leader.election.enable", Type: ConfigBoolean, Default: "false", Doc: "default unclean.leader.election.enable"},
	{Name: "producer.id.expiration.ms", Type: ConfigInt, Default: "86400000", Min: 1,
		Doc: "an idempotent producer the broker has not seen for this long (on the broker's clock) is forgotten"},
}

func byName(defs []ConfigDef) map[string]ConfigDef {
	m := make(map[string]ConfigDef, len(defs))
	for _, d := range defs {
		m[d.Name] = d
	}
	return m
}

// SortedConfigNames returns the names of defs in order.
func SortedConfigNames(defs map[string]ConfigDef) []string {
	names := make([]string, 0, len(defs))
	for n := range defs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ValidateConfigs checks every name and value against defs; the error names
// the first bad config.
func ValidateConfigs(defs map[string]ConfigDef, cfg map[string]string) error {
	for _, name := range sortedKeys(cfg) {
		d, ok := defs[name]
		if !ok {
			return fmt.Errorf("unknown config %s", name)
		}
		if err := d.Validate(cfg[name]); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ConfigSource says where an effective config value came from, numbered as
// Kafka's DescribeConfigs ConfigSource.
type ConfigSource int8

// Config sources.
const (
	SourceTopic         ConfigSource = 1 // DYNAMIC_TOPIC_CONFIG
	SourceDynamicBroker ConfigSource = 3 // DYNAMIC_DEFAULT_BROKER_CONFIG
	SourceDefault       ConfigSource = 5 // DEFAULT_CONFIG
)

// ResolveTopicConfig returns the effective value of a topic config: the
// topic's own setting, else the broker's dynamic default, else the built-in
// default.
func ResolveTopicConfig(d ConfigDef, topic, broker map[string]string) (string, ConfigSource) {
	if v, ok := topic[d.Name]; ok {
		return v, SourceTopic
	}
	if v, ok := broker[d.BrokerName]; ok && d.BrokerName != "" {
		return v, SourceDynamicBroker
	}
	if bd, ok := BrokerConfigDefs[d.BrokerName]; ok {
		return bd.Default, SourceDefault
	}
	return d.Default, SourceDefault
}

// ResolveBrokerConfig returns the effective value of a broker config.
func ResolveBrokerConfig(d ConfigDef, broker map[string]string) (string, ConfigSource) {
	if v, ok := broker[d.Name]; ok {
		return v, SourceDynamicBroker
	}
	return d.Default, SourceDefault
}
