// Reads the Parquet files named on stdin (a JSON array of local paths) with
// DuckDB, as an independent check of the files a table topic's table
// references, and prints one JSON object per row, ordered by Kafka
// partition and offset: p, o, key (the record key as text), ts (epoch
// milliseconds) and every column that is not a _kafka_* column. Files
// written before a schema evolution lack the newer columns: union_by_name
// reads those as null, as Iceberg does. The partition values in the files'
// paths (_kafka_timestamp_day=...) are not columns: hive_partitioning off.
// Run by cmd/broker/table_interop_test.go with NODE_PATH pointing at
// .bin/node/node_modules, where `make interop` installs @duckdb/node-api.
'use strict';
const fs = require('fs');
const { DuckDBInstance } = require('@duckdb/node-api');

async function main() {
  const files = JSON.parse(fs.readFileSync(0, 'utf8'));
  if (!Array.isArray(files) || files.length === 0) throw new Error('want a JSON array of Parquet paths on stdin');
  const db = await DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false', // parquet is built in; never reach out for anything
    autoload_known_extensions: 'false',
  });
  const con = await db.connect();
  const list = files.map((f) => "'" + String(f).replaceAll("'", "''") + "'").join(', ');
  const sql = `SELECT to_json(r)::VARCHAR FROM (
      SELECT _kafka_partition AS p, _kafka_offset AS o, decode(_kafka_key) AS key,
             epoch_ms(_kafka_timestamp) AS ts,
             * EXCLUDE (_kafka_partition, _kafka_offset, _kafka_key, _kafka_timestamp, _kafka_headers)
      FROM read_parquet([${list}], union_by_name = true, hive_partitioning = false)) r
    ORDER BY r.p, r.o`;
  const reader = await con.runAndReadAll(sql);
  for (const row of reader.getRows()) process.stdout.write(row[0] + '\n');
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
