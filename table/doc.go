// Package table turns table topics into Apache Iceberg tables.
//
// A topic with sediment.table.enable=true gets one worker goroutine (see
// Converter) that reads the topic through the partition log as a
// read_committed consumer does: never past the last stable offset (the
// high watermark, or the first offset of the oldest open transaction),
// skipping transaction markers and the records of aborted transactions,
// and never holding the log's locks across I/O, so producers never wait
// for it. The worker decodes the
// record batches (every codec), converts each record into a row (format
// json: one JSON object per record, typed by sediment.table.schema or
// inferred and evolved; format raw: the value as bytes) plus the metadata
// columns _kafka_partition, _kafka_offset, _kafka_timestamp, _kafka_key and
// _kafka_headers, buffers the rows as Arrow builders and, every
// sediment.table.commit.interval.ms or sediment.table.commit.bytes, writes
// Parquet and commits one Iceberg snapshot with iceberg-go's transactions.
//
// Exactly once: each snapshot's summary records the next offset of every
// partition (commit.go). After a crash the worker resumes from the current
// snapshot, so a record is in the table once or, not yet converted, not at
// all; Parquet files written by a commit that never landed are orphans,
// deleted when the worker next starts. Records that cannot be converted go
// to <topic>.dlq with headers naming the error and the source partition and
// offset (sediment.table.errors=dlq), are counted and logged (skip), or stop
// the table's worker (stop); they never block the topic.
//
// In a cluster (Options.Cluster) each table topic is converted by one
// broker: the one holding its table slot, own/tables/<topic-id-hex> in
// etcd on that broker's session lease (package cluster). The catalog
// commit cannot carry the slot's fence, as partition commits do, because
// the table lives in the catalog and not in etcd. Two guards take its
// place:
//
//   - Before each catalog commit the worker checks that its broker still
//     holds the slot under the fence the worker started with, inside the
//     session's local deadline (which ends before etcd can expire the
//     lease). A broker that lost the slot, or was paused past its lease,
//     stops there.
//   - The check and the commit are not one step, so a zombie may still
//     reach the catalog. The catalog's optimistic concurrency is the final
//     guard: every commit asserts that the table's main branch is still at
//     the snapshot the worker built on, and that snapshot records exactly
//     the offsets the rows start from. A new owner starts from the
//     snapshot current when it opens the table. If the zombie's commit
//     lands first, the new owner's commit built on the older snapshot is
//     refused; it reloads, sees offsets it did not write, drops its buffer
//     and resumes from them. If the new owner's lands first, the zombie's
//     is refused and it does the same. Either way each offset range is in
//     one snapshot only: no row is committed twice, and none is skipped,
//     because the offsets move only with the rows they cover.
//
// ReleaseTable (a graceful hand-over) stops the worker between two
// commits; DropTable (the slot is lost) stops it at once. What a stopped
// worker buffered is converted again by the next owner. Options.Read must
// read partitions other brokers own, and Options.DeadLetter append to
// them: a dead letter is durable at its partition's owner before the
// commit that moves past its record, as on one node, so a crash between
// the two makes the next owner dead-letter the record again (twice in
// <topic>.dlq), never drop it.
//
// The package never speaks the Kafka protocol and never decides where the
// catalog lives: the broker opens the catalog (table/catalog) and passes
// it in.
package table
