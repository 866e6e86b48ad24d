//go:build interop

package main

import (
	"regexp"
	"slices"
	"strings"
)

// allowedDiff is one field where Sediment's answer may differ from Apache
// Kafka's, in the steps Step matches and at the paths Path matches (see
// stepMatch and globMatch). interop/DIFFERENCES.md lists the same entries
// for people; TestInteropDiffListed keeps the two in step.
type allowedDiff struct {
	Step   string
	Path   string
	Reason string
	// Issue is the open issue that will remove the difference; 0 when it is
	// intended and stays.
	Issue int
	// Absent, when set, allows only that broker's lacking the element
	// ("sediment" or "kafka"): its value, where both have it, must match.
	Absent string
	// Test is the test that shows the difference: it fails when the
	// difference no longer appears, so that a fix also updates this list.
	// Empty for values that differ by nature (ids, hosts, times).
	Test string
}

// allowedDiffs is the one list of differences from Apache Kafka every API
// is checked against.
var allowedDiffs = slices.Concat(fieldDiffs, apiDiffs())

// fieldDiffs are the allowed differences in the answers' fields.
var fieldDiffs = []allowedDiff{
	// Identities: each broker names itself and its cluster.
	{Step: "*", Path: "ClusterID", Reason: "each cluster draws its own id"},
	{Step: "*", Path: "ControllerID", Reason: "Sediment's node id (default 0) against the reference broker's node.id 1"},
	{Step: "*", Path: "Brokers[*].NodeID", Reason: "node ids differ (Sediment 0, reference 1)"},
	{Step: "*", Path: "Brokers[*].Port", Reason: "each broker listens on its own random loopback port"},
	{Step: "*", Path: "Topics[*].TopicID", Reason: "topic ids are random UUIDs drawn by each cluster"},
	{Step: "*", Path: "Topics[*].Partitions[*].Leader", Reason: "the leader is the broker's own node id"},
	{Step: "*", Path: "Topics[*].Partitions[*].Replicas[*]", Reason: "the replica is the broker's own node id"},
	{Step: "*", Path: "Topics[*].Partitions[*].ISR[*]", Reason: "the in-sync replica is the broker's own node id"},
	{Step: "*", Path: "NodeID", Reason: "the coordinator is the broker's own node id"},
	{Step: "*", Path: "Port", Reason: "the coordinator's random loopback port"},
	{Step: "*", Path: "Coordinators[*].NodeID", Reason: "the coordinator is the broker's own node id"},
	{Step: "*", Path: "Coordinators[*].Port", Reason: "the coordinator's random loopback port"},
	{Step: "*", Path: "ThrottleMillis", Reason: "quotas and throttling are each broker's own"},
	{Step: "*", Path: "ErrorMessage", Reason: "free text: Sediment names the cause (the CRC it computed, the limit that was passed) where Kafka often sends null; the error code is what clients act on and must match"},
	{Step: "*", Path: "*.ErrorMessage", Reason: "free text (see ErrorMessage)"},
	{Step: "*", Path: "*.*.ErrorMessage", Reason: "free text (see ErrorMessage)"},
	{Step: "*", Path: "ProducerID", Reason: "each broker allocates its own producer ids"},
	{Step: "*", Path: "*.RecordBatches[*].ProducerID", Reason: "each broker allocates its own producer ids"},

	// Configs: Sediment serves the topic configs that mean something for a
	// log in object storage, and has its own for table topics.
	{Step: "*", Path: "*.Configs[*]", Absent: "sediment", Reason: "Sediment has no such topic config (local segment files, flushing, indexes, tiered storage, compression levels, compaction tuning): see the list in DIFFERENCES.md"},
	{Step: "*", Path: "*.Configs[sediment.table.*]", Absent: "kafka", Reason: "table topics are Sediment's own (sediment.table.*)"},

	{Step: "*", Path: "*.Configs[min.insync.replicas].Source",
		Reason: "Kafka 4's storage format sets min.insync.replicas as a cluster-wide dynamic default (KIP-966, eligible leader replicas), source DYNAMIC_DEFAULT_BROKER_CONFIG; Sediment has no replicas and reports Kafka's static default, DEFAULT_CONFIG"},

	// Produce.
	{Step: "Produce idempotent*duplicate", Path: "Topics[*].Partitions[*].LogAppendTime", Test: "TestInteropDiffProduce",
		Reason: "Kafka answers a retried duplicate with the original batch's max timestamp as LogAppendTime even on a CreateTime topic, and the Java producer then reports that as every record's timestamp; Sediment answers -1 as for the original append (its producer state, which is persisted, keeps no timestamps)"},

	{Step: "*LogAppendTime*", Path: "Topics[*].Partitions[*].LogAppendTime", Reason: "LogAppendTime topics: each broker's clock stamps the batch"},
	{Step: "*LogAppendTime*", Path: "Topics[*].Partitions[*].Timestamp", Reason: "LogAppendTime topics: each broker's clock stamps the batch"},
	{Step: "*LogAppendTime*", Path: "Topics[*].Partitions[*].RecordBatches[*].MaxTimestamp", Reason: "LogAppendTime topics: each broker's clock stamps the batch"},
	{Step: "*LogAppendTime*", Path: "Topics[*].Partitions[*].RecordBatches[*].CRC", Reason: "LogAppendTime topics: the CRC covers the stamped max timestamp"},

	// Transactions.
	{Step: "*", Path: "TransactionStates[*].ProducerID", Reason: "each broker allocates its own producer ids"},
	{Step: "*", Path: "TransactionStates[*].StartTimestamp", Reason: "each broker's clock stamps the transaction's start"},
	{Step: "*", Path: "Topics[*].Partitions[*].ActiveProducers[*].ProducerID", Reason: "each broker allocates its own producer ids"},
	{Step: "*", Path: "Topics[*].Partitions[*].AbortedTransactions[*].ProducerID", Reason: "each broker allocates its own producer ids"},
	{Step: "*", Path: "Topics[*].Partitions[*].RecordBatches[*].ProducerID", Reason: "each broker allocates its own producer ids"},
	{Step: "Fetch read_*committed committed", Path: "Topics[*].Partitions[*].RecordBatches[1]", Absent: "kafka", Test: "TestInteropDiffTransactions",
		Reason: "a fetch from a committed transaction's first offset: Kafka answers the data batch alone and the marker's control batch in the next fetch (step \"marker\"), Sediment both; consumers read the same records"},
	{Step: "Fetch read_*committed aborted", Path: "Topics[*].Partitions[*].RecordBatches[1]", Absent: "kafka", Test: "TestInteropDiffTransactions",
		Reason: "as for the committed transaction: Kafka sends the abort marker's control batch in the next fetch"},
	{Step: "DescribeTransactions *", Path: "TransactionStates[*].Topics[0].Partitions[0]",
		Reason: "a transaction's group is named as partition N of __consumer_offsets: Sediment's N is the group's coordinator shard (64 shards), Kafka's the partition of its __consumer_offsets topic (50 partitions)"},
	{Step: "DescribeProducers open", Path: "Topics[*].Partitions[*].ActiveProducers[*].LastTimestamp", Issue: 19, Test: "TestInteropDiffTransactions",
		Reason: "Sediment reports when it appended the producer's last batch; Kafka reports the batch's max timestamp"},
	{Step: "DescribeProducers committed", Path: "Topics[*].Partitions[*].ActiveProducers[*].LastTimestamp",
		Reason: "after a marker a producer's last timestamp is the marker's, stamped by each broker's clock"},
	{Step: "Fetch read_*committed *", Path: "Topics[*].Partitions[*].RecordBatches[*].FirstTimestamp", Reason: "a control batch is stamped by each broker's clock"},
	{Step: "Fetch read_*committed *", Path: "Topics[*].Partitions[*].RecordBatches[*].MaxTimestamp", Reason: "a control batch is stamped by each broker's clock"},
	{Step: "Fetch read_*committed *", Path: "Topics[*].Partitions[*].RecordBatches[*].CRC", Reason: "a control batch's CRC covers its timestamps and producer id"},

	// The consumer group protocol.
	{Step: "ConsumerGroupHeartbeat*", Path: "**", Issue: 21, Test: "TestInteropDiffConsumerGroupProtocol",
		Reason: "Sediment does not serve ConsumerGroupHeartbeat (KIP-848) yet and answers UNSUPPORTED_VERSION; Kafka makes the member join"},

	// Fetch, ListOffsets.
	{Step: "Fetch max bytes cutting a batch", Path: "Topics[*].Partitions[*].RecordBatches.partial", Test: "TestInteropDiffFetch",
		Reason: "Kafka cuts the last batch at the byte limit and sends the partial batch, which clients discard; Sediment sends whole batches only (the first one even beyond the limit, as Kafka does)"},
	{Step: "ListOffsets max timestamp after delete all", Path: "Topics[*].Partitions[*].**", Test: "TestInteropDiffFetch",
		Reason: "after DeleteRecords to the high watermark Kafka still answers max timestamp (-3) from the segment left on disk, an offset below the log start offset; Sediment answers -1: no record is left"},

	// CreateTopics.
	{Step: "CreateTopics replication 3", Path: "Topics[0].**", Test: "TestInteropDiffCreateTopics",
		Reason: "Sediment accepts any replication factor (-1 or >= 1) and reports 1: durability comes from the WAL and the object store, not from replicas, so a topic created for a three-broker Kafka cluster works; one Kafka broker answers INVALID_REPLICATION_FACTOR"},

	// DescribeConfigs.
	{Step: "*", Path: "*.Configs[*].Documentation", Reason: "Sediment documents what each config does in Sediment (accepted for compatibility, replaced by a flag, ...)"},
	{Step: "*", Path: "*.Configs[min.insync.replicas].ConfigSynonyms.**",
		Reason: "Kafka 4 lists the cluster-wide dynamic default its storage format writes (KIP-966) before the static default; Sediment lists the static default (see min.insync.replicas above)"},
	{Step: "DescribeConfigs*", Path: "*.Configs[retention.ms].ConfigSynonyms.**", Test: "TestInteropDiffDescribeConfigs",
		Reason: "Kafka's log.retention.ms has no default (it falls back to log.retention.hours=168) and is left out of the synonyms; Sediment has only log.retention.ms, whose default is 604800000, and lists it"},
	{Step: "DescribeConfigs*", Path: "*.Configs[segment.ms].ConfigSynonyms.**", Test: "TestInteropDiffDescribeConfigs",
		Reason: "Kafka's log.roll.ms has no default (it falls back to log.roll.hours=168) and is left out of the synonyms; Sediment has only log.roll.ms, default 604800000, and lists it"},
	{Step: "DescribeConfigs broker", Path: "Resources[*].Configs[log.retention.ms].**", Test: "TestInteropDiffDescribeConfigs",
		Reason: "Kafka's log.retention.ms is null by default (log.retention.hours=168 applies); Sediment's is 604800000, the same retention, and it has no log.retention.hours or log.retention.minutes"},
	{Step: "DescribeConfigs broker", Path: "Resources[*].Configs[log.roll.ms].**", Test: "TestInteropDiffDescribeConfigs",
		Reason: "Kafka's log.roll.ms is null by default (log.roll.hours=168 applies); Sediment's is 604800000, and it has no log.roll.hours"},
	{Step: "DescribeConfigs broker", Path: "Resources[*].Configs[auto.create.topics.enable].ReadOnly", Test: "TestInteropDiffDescribeConfigs",
		Reason: "Sediment changes auto.create.topics.enable at run time (IncrementalAlterConfigs on the broker); Kafka only from server.properties"},
	{Step: "DescribeConfigs broker", Path: "Resources[*].Configs[num.partitions].ReadOnly", Test: "TestInteropDiffDescribeConfigs",
		Reason: "Sediment changes num.partitions at run time (IncrementalAlterConfigs on the broker); Kafka only from server.properties"},
	{Step: "DescribeConfigs broker", Path: "Resources[*].ResourceName", Reason: "the broker resource is named by the broker's own node id"},

	// Metadata.
	{Step: "Metadata auto-create", Path: "Topics[*].ErrorCode", Test: "TestInteropDiffMetadata",
		Reason: "Sediment creates an auto-created topic before it answers and returns it at once; Kafka's controller creates it asynchronously and the first answer is UNKNOWN_TOPIC_OR_PARTITION, which clients retry"},
	{Step: "Metadata auto-create", Path: "Topics[*].Partitions[*]", Absent: "kafka", Test: "TestInteropDiffMetadata",
		Reason: "the partitions of the topic Sediment has already created (see the entry above)"},
}

// findAllowed returns the entry that allows the difference fd in step.
func findAllowed(step string, fd fieldDiff) *allowedDiff {
	for i := range allowedDiffs {
		a := &allowedDiffs[i]
		if !stepMatch(a.Step, step) || !globMatch(a.Path, fd.path) {
			continue
		}
		if (a.Absent == "sediment" && fd.a != "absent") || (a.Absent == "kafka" && fd.b != "absent") {
			continue
		}
		return a
	}
	return nil
}

// stepMatch matches a step's name against a pattern in which * is any run
// of characters.
func stepMatch(pattern, step string) bool {
	re := "^" + strings.ReplaceAll(regexp.QuoteMeta(pattern), `\*`, `.*`) + "$"
	return regexp.MustCompile(re).MatchString(step)
}

// globMatch matches s against a pattern in which * is any run of
// characters without a dot, or inside brackets any key (config names have
// dots: Configs[retention.ms]).
func globMatch(pattern, s string) bool {
	if pattern == "**" {
		return true
	}
	var re strings.Builder
	re.WriteString("^")
	below := strings.HasSuffix(pattern, ".**")
	pattern = strings.TrimSuffix(pattern, ".**")
	inKey := false
	for _, c := range pattern {
		switch {
		case c == '*' && inKey:
			re.WriteString(`[^\]]*`)
		case c == '*':
			re.WriteString(`[^.]*`)
		default:
			inKey = (inKey || c == '[') && c != ']'
			re.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	if below {
		re.WriteString(`(\..*|\[.*)?`)
	}
	re.WriteString("$")
	return regexp.MustCompile(re.String()).MatchString(s)
}
