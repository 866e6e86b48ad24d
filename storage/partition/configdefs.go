package partition

import "github.com/sediment-io/sediment/config"

// The log's topic configs and the broker configs that give their defaults.
// Other domains register their own (groupcoord, table).
func init() {
	config.RegisterTopic(topicConfigDefs...)
	config.RegisterBroker(brokerConfigDefs...)
}

var topicConfigDefs = []config.Def{
	{Name: "cleanup.policy", Type: config.List, Default: "delete", BrokerName: "log.cleanup.policy", Enum: []string{"delete", "compact"},
		Doc: "delete applies retention; compact keeps every record (compaction itself is not implemented, nothing is deleted)"},
	{Name: "retention.ms", Type: config.Long, Default: "604800000", BrokerName: "log.retention.ms", Min: -1,
		Doc: "delete whole segments older than this; -1 keeps forever"},
	{Name: "retention.bytes", Type: config.Long, Default: "-1", BrokerName: "log.retention.bytes", Min: -1,
		Doc: "delete oldest segments beyond this many bytes per partition; -1 unbounded"},
	{Name: "max.message.bytes", Type: config.Int, Default: "1048588", BrokerName: "message.max.bytes", Min: 0,
		Doc: "largest record batch a producer may send"},
	{Name: "message.timestamp.type", Type: config.String, Default: "CreateTime", BrokerName: "log.message.timestamp.type",
		Enum: []string{"CreateTime", "LogAppendTime"}, Doc: "LogAppendTime makes the broker stamp batches on append"},
	{Name: "compression.type", Type: config.String, Default: "producer", BrokerName: "compression.type", Enum: []string{"producer"},
		Doc: "batches are stored as the producer compressed them; only producer is supported"},
	{Name: "min.insync.replicas", Type: config.Int, Default: "1", BrokerName: "min.insync.replicas", Min: 1,
		Doc: "accepted for compatibility: durability comes from the WAL and the object store"},
	{Name: "segment.bytes", Type: config.Int, Default: "1073741824", BrokerName: "log.segment.bytes", Min: 14,
		Doc: "accepted for compatibility: objects are cut by --upload-bytes and --upload-interval"},
	{Name: "segment.ms", Type: config.Long, Default: "604800000", BrokerName: "log.roll.ms", Min: 1,
		Doc: "accepted for compatibility: objects are cut by --upload-interval"},
	{Name: "unclean.leader.election.enable", Type: config.Boolean, Default: "false", BrokerName: "unclean.leader.election.enable",
		Doc: "accepted for compatibility: there are no replicas to elect"},
}

var brokerConfigDefs = []config.Def{
	{Name: "auto.create.topics.enable", Type: config.Boolean, Default: "true", Doc: "create unknown topics on Metadata requests"},
	{Name: "num.partitions", Type: config.Int, Default: "1", Min: 1, Doc: "partitions of auto-created topics and of CreateTopics with -1"},
	{Name: "default.replication.factor", Type: config.Int, Default: "1", Min: 1, ReadOnly: true, Doc: "reported only: the object store replicates"},
	{Name: "message.max.bytes", Type: config.Int, Default: "1048588", Min: 0, Doc: "default max.message.bytes"},
	{Name: "log.retention.ms", Type: config.Long, Default: "604800000", Min: -1, Doc: "default retention.ms"},
	{Name: "log.retention.bytes", Type: config.Long, Default: "-1", Min: -1, Doc: "default retention.bytes"},
	{Name: "log.cleanup.policy", Type: config.List, Default: "delete", Enum: []string{"delete", "compact"}, Doc: "default cleanup.policy"},
	{Name: "log.message.timestamp.type", Type: config.String, Default: "CreateTime", Enum: []string{"CreateTime", "LogAppendTime"},
		Doc: "default message.timestamp.type"},
	{Name: "compression.type", Type: config.String, Default: "producer", Enum: []string{"producer"}, Doc: "default compression.type"},
	{Name: "min.insync.replicas", Type: config.Int, Default: "1", Min: 1, Doc: "default min.insync.replicas"},
	{Name: "log.segment.bytes", Type: config.Int, Default: "1073741824", Min: 14, Doc: "default segment.bytes"},
	{Name: "log.roll.ms", Type: config.Long, Default: "604800000", Min: 1, Doc: "default segment.ms"},
	{Name: "unclean.leader.election.enable", Type: config.Boolean, Default: "false", Doc: "default unclean.leader.election.enable"},
	{Name: "producer.id.expiration.ms", Type: config.Int, Default: "86400000", Min: 1,
		Doc: "an idempotent producer the broker has not seen for this long (on the broker's clock) is forgotten"},
}
