package catalog

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/apache/iceberg-go"
	icebergcatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// namespace holds every table topic's table; the table name is the topic's.
const namespace = "sediment"

// catalogName is the name the broker's catalogs go by (the catalog_name
// column of the SQL catalog's tables, the REST client's name).
const catalogName = "sediment"

// Options locate the broker's storage.
type Options struct {
	DataDir        string // the broker's --data-dir; the embedded catalog is DataDir/iceberg/catalog.db
	ObjectStoreURL string // the broker's --object-store URL; "" means file://DataDir/objects
}

// accepted lists the forms of --table-catalog, for error messages.
const accepted = `want "" or "sqlite" (embedded), sqlite:///PATH.db, postgres://USER:PASSWORD@HOST:PORT/DB ` +
	`or rest+http(s)://HOST:PORT/PREFIX?warehouse=W&credential=ID:SECRET&token=T`

// Open opens the Iceberg catalog named by rawURL (the --table-catalog flag):
//
//	""  or "sqlite"                       embedded SQL catalog on modernc.org/sqlite at DataDir/iceberg/catalog.db
//	"sqlite:///abs/path.db"               SQL catalog on that SQLite file
//	"postgres://user:pw@host:port/db?.."  SQL catalog on PostgreSQL
//	"rest+http://host:port/prefix", "rest+https://..."  REST catalog (query: warehouse=, credential=, token=)
//
// The namespace "sediment" exists when Open returns; new tables' locations
// default to the warehouse (see Warehouse). The caller closes the catalog
// through icebergcatalog.Closer when done.
func Open(ctx context.Context, rawURL string, opts Options) (icebergcatalog.Catalog, error) {
	loc, props, err := Warehouse(opts)
	if err != nil {
		return nil, err
	}
	cat, err := open(ctx, rawURL, opts, loc, props)
	if err != nil {
		return nil, err
	}
	if err := ensureNamespace(ctx, cat, nsProps(rawURL, loc)); err != nil {
		closeCatalog(cat)
		return nil, fmt.Errorf("catalog: --table-catalog %s: %w", redact(rawURL), err)
	}
	return cat, nil
}

// open chooses the catalog by rawURL's scheme.
func open(ctx context.Context, rawURL string, opts Options, loc string, props iceberg.Properties) (icebergcatalog.Catalog, error) {
	if rawURL == "" || rawURL == "sqlite" {
		if opts.DataDir == "" {
			return nil, errors.New("catalog: the embedded catalog needs the broker's --data-dir")
		}
		return openSQLite(ctx, filepath.Join(opts.DataDir, "iceberg", "catalog.db"), loc, props)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // the url.Error repeats the URL, password and all
		}
		return nil, badURL(rawURL, "%v", err)
	}
	switch u.Scheme {
	case "sqlite":
		path, err := sqlitePath(u)
		if err != nil {
			return nil, badURL(rawURL, "%v", err)
		}
		return openSQLite(ctx, path, loc, props)
	case "postgres", "postgresql":
		return openPostgres(ctx, u, loc, props)
	case "rest+http", "rest+https":
		return openREST(ctx, u, loc, props)
	case "":
		return nil, badURL(rawURL, "no scheme")
	}
	return nil, badURL(rawURL, "unsupported scheme %q", u.Scheme)
}

// ErrBadURL marks an Open error caused by the --table-catalog value itself,
// which no retry can cure, as opposed to a catalog that cannot be reached
// now: errors.Is(err, ErrBadURL).
var ErrBadURL = errors.New("catalog: unusable --table-catalog")

// badURLError is a --table-catalog value that cannot be used.
type badURLError struct{ msg string }

func (e *badURLError) Error() string        { return e.msg }
func (e *badURLError) Is(target error) bool { return target == ErrBadURL }

// badURL is the error for a --table-catalog value that cannot be used.
func badURL(rawURL, format string, args ...any) error {
	return &badURLError{fmt.Sprintf("catalog: --table-catalog %s: %s (%s)", redact(rawURL), fmt.Sprintf(format, args...), accepted)}
}

// redact quotes rawURL with its password and secret parameters masked, so
// that errors and logs never carry them.
func redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		if strings.Contains(rawURL, "@") {
			return `"(unparseable URL with credentials)"`
		}
		return fmt.Sprintf("%q", rawURL)
	}
	q := u.Query()
	for _, secret := range []string{"credential", "token", "password"} {
		if q.Has(secret) {
			q.Set(secret, "xxxxx")
		}
	}
	if len(q) > 0 {
		u.RawQuery = q.Encode()
	}
	return fmt.Sprintf("%q", u.Redacted())
}

// nsProps are the properties the namespace is created with. A SQL catalog
// places tables under its warehouse property; a REST catalog without
// warehouse= gets the namespace's location instead, so that its tables land
// in the broker's warehouse too.
func nsProps(rawURL, loc string) iceberg.Properties {
	if !strings.HasPrefix(rawURL, "rest+") {
		return iceberg.Properties{}
	}
	if u, err := url.Parse(rawURL); err == nil && u.Query().Get("warehouse") != "" {
		return iceberg.Properties{}
	}
	location, err := url.JoinPath(loc, namespace+".db")
	if err != nil {
		return iceberg.Properties{}
	}
	return iceberg.Properties{"location": location}
}

// ensureNamespace creates the "sediment" namespace unless it exists; a
// concurrent creation by another broker is success.
func ensureNamespace(ctx context.Context, cat icebergcatalog.Catalog, props iceberg.Properties) error {
	ns := table.Identifier{namespace}
	ok, err := cat.CheckNamespaceExists(ctx, ns)
	if err != nil {
		return fmt.Errorf("check namespace %s: %w", namespace, err)
	}
	if ok {
		return nil
	}
	err = cat.CreateNamespace(ctx, ns, props)
	if err != nil && !errors.Is(err, icebergcatalog.ErrNamespaceAlreadyExists) {
		return fmt.Errorf("create namespace %s: %w", namespace, err)
	}
	return nil
}

// closeCatalog closes cat if it holds resources.
func closeCatalog(cat icebergcatalog.Catalog) {
	if c, ok := cat.(icebergcatalog.Closer); ok {
		_ = c.Close()
	}
}
