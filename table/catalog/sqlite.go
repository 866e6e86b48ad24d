package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/iceberg-go"
	icebergcatalog "github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver, pure Go
)

// sqlitePath is the file a sqlite:///PATH URL names.
func sqlitePath(u *url.URL) (string, error) {
	if u.Host != "" {
		return "", fmt.Errorf("host %q: want sqlite:///ABSOLUTE/PATH.db (three slashes)", u.Host)
	}
	if u.Path == "" || !filepath.IsAbs(u.Path) {
		return "", fmt.Errorf("want sqlite:///ABSOLUTE/PATH.db")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("sqlite:// takes no parameters")
	}
	if strings.HasSuffix(u.Path, "/") {
		return "", fmt.Errorf("path %q is a directory: want a file such as %scatalog.db", u.Path, u.Path)
	}
	return filepath.Clean(u.Path), nil
}

// openSQLite opens the SQL catalog on the SQLite file at path, creating it
// and its directory if needed. The database runs in WAL mode and every
// transaction takes the write lock up front (BEGIN IMMEDIATE), waiting up to
// the busy timeout, so two writers queue instead of failing on a lock
// upgrade.
func openSQLite(ctx context.Context, path, loc string, props iceberg.Properties) (icebergcatalog.Catalog, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("catalog: sqlite: %w", err)
	}
	dsn := "file:" + uriPathEscaper.Replace(path) + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("catalog: sqlite %s: %w", path, err)
	}
	cat, err := newSQLCatalog(ctx, db, sqlcat.SQLite, loc, props)
	if err != nil {
		return nil, fmt.Errorf("catalog: sqlite %s: %w", path, err)
	}
	return cat, nil
}

// uriPathEscaper escapes what SQLite's URI file names give a meaning to:
// the name is decoded (%HH) and ends at ? or #.
var uriPathEscaper = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")

// sqlCatalog is iceberg-go's SQL catalog together with the database handle
// it runs on, which Close releases too.
type sqlCatalog struct {
	*sqlcat.Catalog
	db *sql.DB
}

// Close closes the catalog and its database handle.
func (c *sqlCatalog) Close() error {
	err := c.Catalog.Close()
	if dbErr := c.db.Close(); err == nil {
		err = dbErr
	}
	return err
}

// newSQLCatalog opens iceberg-go's SQL catalog on db, creating its tables
// if needed. Tables are placed under the warehouse loc, and their files are
// reached with props. db is closed on error.
func newSQLCatalog(ctx context.Context, db *sql.DB, dialect sqlcat.SupportedDialect, loc string, props iceberg.Properties) (*sqlCatalog, error) {
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	catProps := iceberg.Properties{"warehouse": loc}
	for k, v := range props {
		catProps[k] = v
	}
	c, err := sqlcat.NewCatalog(catalogName, db, dialect, catProps)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return &sqlCatalog{Catalog: c, db: db}, nil
}
