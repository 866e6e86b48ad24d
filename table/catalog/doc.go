// Package catalog opens the Apache Iceberg catalog that table topics commit
// to, chosen by the broker's --table-catalog URL, and locates the warehouse
// (where tables' data and metadata files live) inside the broker's object
// store, under "tables/".
//
//	""  or "sqlite"                 the embedded SQL catalog: SQLite (modernc.org/sqlite,
//	                                no cgo) at DATA/iceberg/catalog.db
//	sqlite:///abs/path.db           the SQL catalog on that SQLite file
//	postgres://user:pw@host:port/db the SQL catalog on PostgreSQL (pgx)
//	rest+http://host:port/prefix    an Iceberg REST catalog (Polaris, Nessie, Lakekeeper,
//	rest+https://...                Glue's REST endpoint); query: warehouse=, credential=, token=
//
// Whatever the catalog, the namespace "sediment" exists once Open returns;
// a table topic's table is sediment.<topic>. The package only opens and
// locates: it never creates, writes or reads tables itself (package table
// does).
package catalog
