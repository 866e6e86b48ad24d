// Package table turns table topics into Apache Iceberg tables.
//
// A topic with sediment.table.enable=true gets one worker goroutine (see
// Converter) that reads the topic's committed records through the partition
// log, never past the high watermark and never holding the log's locks
// across I/O, so producers never wait for it. The worker decodes the
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
// The package never speaks the Kafka protocol and never decides where the
// catalog lives: the broker opens the catalog (table/catalog) and passes
// it in.
package table
