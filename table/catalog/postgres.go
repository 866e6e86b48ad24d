package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"

	"github.com/apache/iceberg-go"
	icebergcatalog "github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/jackc/pgx/v5"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
)

// openPostgres opens the SQL catalog on the PostgreSQL database u names
// (any libpq URL: sslmode=, connect_timeout=, ...). The catalog's tables
// are created in it if missing; the database itself must exist.
func openPostgres(ctx context.Context, u *url.URL, loc string, props iceberg.Properties) (icebergcatalog.Catalog, error) {
	raw := u.String()
	if u.Host == "" && u.Query().Get("host") == "" {
		return nil, badURL(raw, "no server: want postgres://USER:PASSWORD@HOST:PORT/DB")
	}
	if _, err := pgx.ParseConfig(raw); err != nil {
		return nil, badURL(raw, "%v", err)
	}
	db, err := sql.Open("pgx", raw)
	if err != nil {
		return nil, badURL(raw, "%v", err)
	}
	cat, err := newSQLCatalog(ctx, db, sqlcat.Postgres, loc, props)
	if err != nil {
		return nil, fmt.Errorf("catalog: --table-catalog %s: %w", redact(raw), err)
	}
	return cat, nil
}
