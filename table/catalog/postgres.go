package catalog

import (
	"context"
	"net/url"

	"github.com/apache/iceberg-go"
	icebergcatalog "github.com/apache/iceberg-go/catalog"
)

// openPostgres opens the SQL catalog on PostgreSQL.
func openPostgres(ctx context.Context, u *url.URL, loc string, props iceberg.Properties) (icebergcatalog.Catalog, error) {
	return nil, badURL(u.String(), "PostgreSQL catalogs are not supported yet")
}
