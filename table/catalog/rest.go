package catalog

import (
	"context"
	"net/url"

	"github.com/apache/iceberg-go"
	icebergcatalog "github.com/apache/iceberg-go/catalog"
)

// openREST opens an Iceberg REST catalog.
func openREST(ctx context.Context, u *url.URL, loc string, props iceberg.Properties) (icebergcatalog.Catalog, error) {
	return nil, badURL(u.String(), "REST catalogs are not supported yet")
}
