package catalog_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	icebergcatalog "github.com/apache/iceberg-go/catalog"

	"github.com/sediment-io/sediment/table/catalog"
	"github.com/sediment-io/sediment/table/catalog/resttest"
)

// TestRESTCatalogRoundTrip writes and reads a table through iceberg-go's
// REST client against our spec server (resttest): the namespace is
// created over REST with its location in the broker's warehouse, so the
// table's files land under tables/ of the object store.
func TestRESTCatalogRoundTrip(t *testing.T) {
	raw := "rest+" + resttest.Start(t, "api/catalog", "").URL
	opts := catalog.Options{DataDir: t.TempDir()}
	cat, err := catalog.Open(context.Background(), raw, opts)
	if err != nil {
		t.Fatal(err)
	}
	loc := roundTrip(t, cat, func() icebergcatalog.Catalog { return openCatalog(t, raw, opts) })
	dir := filepath.Join(opts.DataDir, "objects", "tables", "sediment.db", "orders")
	if loc != "file://"+dir {
		t.Errorf("table location %q, want file://%s", loc, dir)
	}
	assertDataFilesUnder(t, dir)
}

// TestRESTCatalogWarehouseAndToken: warehouse= reaches the server's
// /v1/config, token= is sent as the bearer token, credential= is traded for
// a token at the server's OAuth2 endpoint, and a wrong token is an error
// naming --table-catalog without the token.
func TestRESTCatalogWarehouseAndToken(t *testing.T) {
	srv := resttest.Start(t, "cat", "s3cr3t")
	base := srv.URL
	opts := catalog.Options{DataDir: t.TempDir()}
	cat := openCatalog(t, "rest+"+base+"?warehouse=lake&token=s3cr3t", opts)
	ok, err := cat.CheckNamespaceExists(context.Background(), []string{"sediment"})
	if err != nil || !ok {
		t.Fatalf("namespace sediment exists = %v, %v", ok, err)
	}
	if !slices.Contains(srv.Warehouses(), "lake") {
		t.Errorf("the server's /v1/config saw warehouses %q, want lake", srv.Warehouses())
	}
	cat = openCatalog(t, "rest+"+base+"?credential=sediment:s3cr3t-secret", opts)
	if ok, err := cat.CheckNamespaceExists(context.Background(), []string{"sediment"}); err != nil || !ok {
		t.Fatalf("with an OAuth2 client credential: namespace sediment exists = %v, %v", ok, err)
	}
	_, err = catalog.Open(context.Background(), "rest+"+base+"?token=wrong-token", opts)
	if err == nil || !strings.Contains(err.Error(), "--table-catalog") || strings.Contains(err.Error(), "wrong-token") {
		t.Errorf("Open with a wrong token = %v, want an error naming --table-catalog without the token", err)
	}
}
