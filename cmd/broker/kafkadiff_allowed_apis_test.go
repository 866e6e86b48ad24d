//go:build interop

package main

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiDiffs are the allowed differences of ApiVersions: the APIs Apache
// Kafka serves and Sediment does not, each with the issue that adds it (0:
// none will), and the versions each serves that the other does not.
func apiDiffs() []allowedDiff {
	missing := []struct {
		issue  int
		reason string
		keys   []int16
	}{
		{20, "security: SASL, ACLs, delegation tokens, quotas, SCRAM users", []int16{17, 29, 30, 31, 36, 38, 39, 40, 41, 48, 49, 50, 51}},
		{21, "the consumer group protocol (KIP-848) and share groups (KIP-932)", []int16{68, 69, 76, 77, 78, 79, 83, 84, 85, 86, 87, 90, 91, 92}},
		{22, "admin APIs", []int16{34, 35, 43, 45, 46, 74}},
		{18, "the cluster", []int16{64}},
		{0, "a KRaft controller quorum and its feature levels: Sediment keeps its metadata in bbolt or etcd", []int16{55, 57, 80, 81, 94}},
		{0, "streams groups (KIP-1071): no issue plans them yet; Kafka Streams uses the classic protocol by default", []int16{88, 89, 93}},
	}
	var out []allowedDiff
	for _, m := range missing {
		for _, k := range m.keys {
			out = append(out, allowedDiff{Step: "ApiVersions", Path: fmt.Sprintf("ApiKeys[%d]", k), Absent: "sediment",
				Issue: m.issue, Test: "TestInteropDiffApiVersions", Reason: kmsg.NameForKey(k) + ": " + m.reason})
		}
	}
	return append(out,
		allowedDiff{Step: "ApiVersions", Path: "ApiKeys[0].MinVersion", Test: "TestInteropDiffApiVersions",
			Reason: "Produce from v3: Sediment stores record batches (magic 2) only; Kafka 4 still announces v0"},
		allowedDiff{Step: "ApiVersions", Path: "ApiKeys[8].MinVersion", Test: "TestInteropDiffApiVersions",
			Reason: "OffsetCommit v0-v1, which Kafka 4 removed (KIP-896), are still served for old clients"},
		allowedDiff{Step: "ApiVersions", Path: "ApiKeys[9].MinVersion", Test: "TestInteropDiffApiVersions",
			Reason: "OffsetFetch v0, which Kafka 4 removed (KIP-896), is still served for old clients"},
		allowedDiff{Step: "ApiVersions", Path: "ApiKeys[19].MinVersion", Test: "TestInteropDiffApiVersions",
			Reason: "CreateTopics v0-v1, which Kafka 4 removed (KIP-896), are still served for old clients"},
		allowedDiff{Step: "ApiVersions", Path: "ApiKeys[20].MinVersion", Test: "TestInteropDiffApiVersions",
			Reason: "DeleteTopics v0, which Kafka 4 removed (KIP-896), is still served for old clients"},
		allowedDiff{Step: "ApiVersions", Path: "ApiKeys[32].MinVersion", Test: "TestInteropDiffApiVersions",
			Reason: "DescribeConfigs v0, which Kafka 4 removed (KIP-896), is still served for old clients"},
		allowedDiff{Step: "ApiVersions", Path: "ApiKeys[24].MaxVersion", Issue: 19, Test: "TestInteropDiffApiVersions",
			Reason: "AddPartitionsToTxn v5 belongs to transaction version 2 (KIP-890 part 2), which Sediment does not serve yet"},
		allowedDiff{Step: "ApiVersions", Path: "ApiKeys[26].MaxVersion", Issue: 19, Test: "TestInteropDiffApiVersions",
			Reason: "EndTxn v5 (the epoch bump of every commit) is transaction version 2 (KIP-890 part 2), which Sediment does not serve yet"},
		allowedDiff{Step: "ApiVersions", Path: "ApiKeys[27].MinVersion", Test: "TestInteropDiffApiVersions",
			Reason: "WriteTxnMarkers v0, which Kafka 4 removed (KIP-896), is still served for old tools"},
		allowedDiff{Step: "ApiVersions", Path: "ApiKeys[27].MaxVersion", Issue: 19, Test: "TestInteropDiffApiVersions",
			Reason: "WriteTxnMarkers v2 carries the transaction version (KIP-890 part 2), which Sediment does not serve yet"},
		allowedDiff{Step: "ApiVersions", Path: "ApiKeys[28].MaxVersion", Issue: 19, Test: "TestInteropDiffApiVersions",
			Reason: "TxnOffsetCommit v5 and later belong to transaction version 2 (KIP-890 part 2), which Sediment does not serve yet"},
		allowedDiff{Step: "ApiVersions", Path: "ApiKeys[66].MaxVersion", Issue: 19, Test: "TestInteropDiffApiVersions",
			Reason: "ListTransactions v2 filters by a transactional id pattern (KIP-1152), which Sediment does not serve yet"},
		allowedDiff{Step: "ApiVersions", Path: "SupportedFeatures[metadata.version]", Absent: "sediment", Test: "TestInteropDiffApiVersions",
			Reason: "KRaft's metadata version: Sediment has no KRaft metadata log"},
		allowedDiff{Step: "ApiVersions", Path: "FinalizedFeatures[metadata.version]", Absent: "sediment", Test: "TestInteropDiffApiVersions",
			Reason: "KRaft's metadata version: Sediment has no KRaft metadata log"},
		allowedDiff{Step: "ApiVersions", Path: "FinalizedFeatures[eligible.leader.replicas.version]", Absent: "sediment", Test: "TestInteropDiffApiVersions",
			Reason: "eligible leader replicas (KIP-966): Sediment has no replicas"},
		allowedDiff{Step: "ApiVersions", Path: "FinalizedFeaturesEpoch", Test: "TestInteropDiffApiVersions",
			Reason: "the epoch of Kafka's finalized features; Sediment finalizes none (-1)"},
		allowedDiff{Step: "ApiVersions", Path: "FinalizedFeatures[transaction.version]", Absent: "sediment", Issue: 19, Test: "TestInteropDiffApiVersions",
			Reason: "transaction.version 2 (KIP-890) tells clients the broker runs transactions' second phase"},
		allowedDiff{Step: "ApiVersions", Path: "FinalizedFeatures[group.version]", Absent: "sediment", Issue: 21, Test: "TestInteropDiffApiVersions",
			Reason: "group.version 1 tells clients the broker serves the consumer group protocol (KIP-848)"},
		allowedDiff{Step: "ApiVersions", Path: "FinalizedFeatures[share.version]", Absent: "sediment", Issue: 21, Test: "TestInteropDiffApiVersions",
			Reason: "share.version tells clients the broker serves share groups (KIP-932)"},
		allowedDiff{Step: "ApiVersions", Path: "FinalizedFeatures[streams.version]", Absent: "sediment", Test: "TestInteropDiffApiVersions",
			Reason: "streams groups (KIP-1071): no issue plans them yet"},
	)
}
