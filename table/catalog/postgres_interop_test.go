//go:build interop

package catalog_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	icebergcatalog "github.com/apache/iceberg-go/catalog"

	"github.com/sediment-io/sediment/table/catalog"
	"github.com/sediment-io/sediment/table/catalog/pgtest"
)

// TestInteropPostgresCatalog runs the SQL catalog on a real PostgreSQL
// server: a table written through it is read back after the catalog is
// reopened, and the catalog's rows are in PostgreSQL.
func TestInteropPostgresCatalog(t *testing.T) {
	pgURL := pgtest.Start(t)
	opts := catalog.Options{DataDir: t.TempDir()}
	cat, err := catalog.Open(context.Background(), pgURL, opts)
	if err != nil {
		t.Fatal(err)
	}
	loc := roundTrip(t, cat, func() icebergcatalog.Catalog { return openCatalog(t, pgURL, opts) })
	if want := "file://" + filepath.Join(opts.DataDir, "objects", "tables", "sediment.db", "orders"); loc != want {
		t.Errorf("table location %q, want %q", loc, want)
	}
	db, err := sql.Open("pgx", pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ns, name, metadata string
	err = db.QueryRow(`SELECT table_namespace, table_name, metadata_location FROM iceberg_tables WHERE catalog_name = 'sediment'`).
		Scan(&ns, &name, &metadata)
	if err != nil || ns != "sediment" || name != "orders" || !strings.HasPrefix(metadata, loc+"/metadata/") {
		t.Errorf("iceberg_tables row = (%q, %q, %q), %v; want sediment.orders with metadata under %s", ns, name, metadata, err, loc)
	}
}

// TestInteropPostgresCatalogUnreachable: a server that is not there is an
// error naming --table-catalog, without the password.
func TestInteropPostgresCatalogUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	raw := fmt.Sprintf("postgres://u:hunter2@127.0.0.1:%s/db?sslmode=disable&connect_timeout=5", closedLoopbackPort(t))
	_, err := catalog.Open(ctx, raw, catalog.Options{DataDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "--table-catalog") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("Open(unreachable) = %v, want an error naming --table-catalog without the password", err)
	}
}

// BenchmarkInteropPostgresAppendCommit is BenchmarkAppendCommit on the SQL
// catalog on a real PostgreSQL.
func BenchmarkInteropPostgresAppendCommit(b *testing.B) {
	benchAppendCommit(b, pgtest.Start(b), catalog.Options{DataDir: b.TempDir()})
}
