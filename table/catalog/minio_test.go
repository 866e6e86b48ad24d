package catalog_test

import (
	"context"
	"strings"
	"testing"

	miniogo "github.com/minio/minio-go/v7"

	icebergcatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/io"

	"github.com/sediment-io/sediment/storage/objectstore/miniotest"
	"github.com/sediment-io/sediment/table/catalog"
	"github.com/sediment-io/sediment/table/catalog/resttest"
)

// TestMinIOWarehouse writes a table whose files live in a real MinIO under
// PREFIX/tables/ and reads it back, with the object store named the two
// ways the broker accepts.
func TestMinIOWarehouse(t *testing.T) {
	srv := miniotest.Shared(t)
	for _, tc := range []struct{ name, bucket, prefix, url string }{
		{"s3", "wh-s3", "cluster-a", srv.S3URL("wh-s3", "cluster-a")},
		{"minio", "wh-minio", "cluster/b", srv.MinioURL("wh-minio", "cluster/b")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv.CreateBucket(t, tc.bucket)
			opts := catalog.Options{DataDir: t.TempDir(), ObjectStoreURL: tc.url}
			loc, props, err := catalog.Warehouse(opts)
			if err != nil {
				t.Fatal(err)
			}
			prefix := tc.prefix
			if want := "s3://" + tc.bucket + "/" + prefix + "/tables"; loc != want {
				t.Errorf("location %q, want %q", loc, want)
			}
			if props[io.S3EndpointURL] != srv.Endpoint() || props[io.S3ForceVirtualAddressing] != "false" {
				t.Errorf("props %v: want endpoint %s and path style", props, srv.Endpoint())
			}
			cat, err := catalog.Open(context.Background(), "", opts)
			if err != nil {
				t.Fatal(err)
			}
			tableLoc := roundTrip(t, cat, func() icebergcatalog.Catalog { return openCatalog(t, "", opts) })
			if want := loc + "/sediment.db/orders"; tableLoc != want {
				t.Errorf("table location %q, want %q", tableLoc, want)
			}
			checkMinIOKeys(t, srv, tc.bucket, prefix)
		})
	}
}

// TestMinIOWarehouseREST: through a REST catalog, the client writes the
// data files into the broker's MinIO warehouse (the namespace location the
// broker gives) with the warehouse's IO properties.
func TestMinIOWarehouseREST(t *testing.T) {
	srv := miniotest.Shared(t)
	srv.CreateBucket(t, "wh-rest")
	opts := catalog.Options{DataDir: t.TempDir(), ObjectStoreURL: srv.S3URL("wh-rest", "c")}
	_, props, err := catalog.Warehouse(opts)
	if err != nil {
		t.Fatal(err)
	}
	raw := "rest+" + resttest.StartWithIO(t, "cat", "", props).URL
	cat, err := catalog.Open(context.Background(), raw, opts)
	if err != nil {
		t.Fatal(err)
	}
	if loc := roundTrip(t, cat, func() icebergcatalog.Catalog { return openCatalog(t, raw, opts) }); loc != "s3://wh-rest/c/tables/sediment.db/orders" {
		t.Errorf("table location %q, want s3://wh-rest/c/tables/sediment.db/orders", loc)
	}
	checkMinIOKeys(t, srv, "wh-rest", "c")
}

// checkMinIOKeys checks that bucket holds the files of table orders, and
// only those, under prefix/tables/sediment.db/orders/.
func checkMinIOKeys(t *testing.T, srv *miniotest.Server, bucket, prefix string) {
	t.Helper()
	keys := listKeys(t, srv, bucket)
	var parquet, metadata int
	for _, k := range keys {
		if !strings.HasPrefix(k, prefix+"/tables/sediment.db/orders/") {
			t.Errorf("object %s is outside %s/tables/sediment.db/orders/", k, prefix)
		}
		switch {
		case strings.HasSuffix(k, ".parquet"):
			parquet++
		case strings.HasSuffix(k, ".metadata.json"):
			metadata++
		}
	}
	if parquet == 0 || metadata == 0 {
		t.Errorf("MinIO holds %d Parquet and %d metadata files, want some of each: %v", parquet, metadata, keys)
	}
}

// listKeys lists every object in bucket.
func listKeys(t *testing.T, srv *miniotest.Server, bucket string) []string {
	t.Helper()
	cl, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for obj := range cl.ListObjects(context.Background(), bucket, miniogo.ListObjectsOptions{Recursive: true}) {
		if obj.Err != nil {
			t.Fatal(obj.Err)
		}
		keys = append(keys, obj.Key)
	}
	return keys
}
