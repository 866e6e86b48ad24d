package catalog_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/io"

	"github.com/sediment-io/sediment/table/catalog"
)

func TestWarehouseS3Properties(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKID")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "SECRET")
	t.Setenv("AWS_SESSION_TOKEN", "TOKEN")
	t.Setenv("AWS_REGION", "eu-west-3")
	creds := iceberg.Properties{io.S3AccessKeyID: "AKID", io.S3SecretAccessKey: "SECRET", io.S3SessionToken: "TOKEN"}
	for _, tc := range []struct {
		url, loc string
		props    iceberg.Properties
	}{
		{"s3://bucket", "s3://bucket/tables",
			iceberg.Properties{io.S3Region: "eu-west-3", io.S3ForceVirtualAddressing: "true"}},
		{"s3://bucket/a/b?region=us-west-2", "s3://bucket/a/b/tables",
			iceberg.Properties{io.S3Region: "us-west-2", io.S3ForceVirtualAddressing: "true"}},
		{"s3://bucket/p?endpoint=http://127.0.0.1:9000&path_style=true", "s3://bucket/p/tables",
			iceberg.Properties{io.S3Region: "eu-west-3", io.S3ForceVirtualAddressing: "false", io.S3EndpointURL: "http://127.0.0.1:9000"}},
		{"minio://127.0.0.1:9000/bucket/p?secure=false", "s3://bucket/p/tables",
			iceberg.Properties{io.S3Region: "eu-west-3", io.S3ForceVirtualAddressing: "false", io.S3EndpointURL: "http://127.0.0.1:9000"}},
		{"minio://minio.example:443/bucket", "s3://bucket/tables",
			iceberg.Properties{io.S3Region: "eu-west-3", io.S3ForceVirtualAddressing: "false", io.S3EndpointURL: "https://minio.example:443"}},
	} {
		loc, props, err := catalog.Warehouse(catalog.Options{ObjectStoreURL: tc.url})
		if err != nil {
			t.Errorf("%s: %v", tc.url, err)
			continue
		}
		want := maps.Clone(tc.props)
		maps.Copy(want, creds)
		if loc != tc.loc || !maps.Equal(props, want) {
			t.Errorf("%s: Warehouse = %q %v\nwant %q %v", tc.url, loc, props, tc.loc, want)
		}
	}
}

func TestWarehouseMinioRootCredentials(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_REGION", "")
	t.Setenv("MINIO_ROOT_USER", "root")
	t.Setenv("MINIO_ROOT_PASSWORD", "rootpw")
	_, props, err := catalog.Warehouse(catalog.Options{ObjectStoreURL: "minio://127.0.0.1:9000/bucket?secure=false"})
	if err != nil {
		t.Fatal(err)
	}
	if props[io.S3AccessKeyID] != "root" || props[io.S3SecretAccessKey] != "rootpw" || props[io.S3Region] != "us-east-1" {
		t.Errorf("props %v: want MINIO_ROOT_USER's credentials and region us-east-1", props)
	}
}

func TestWarehouseBadObjectStore(t *testing.T) {
	for _, raw := range []string{"gs://bucket", "s3://", "s3://Bad_Bucket", "minio://host/b?secure=maybe", "file://", "::"} {
		_, _, err := catalog.Warehouse(catalog.Options{ObjectStoreURL: raw})
		if err == nil || !strings.Contains(err.Error(), "--object-store") {
			t.Errorf("Warehouse(%q) = %v, want an error naming --object-store", raw, err)
		}
	}
	if _, _, err := catalog.Warehouse(catalog.Options{}); err == nil {
		t.Error("Warehouse with no data dir and no object store: no error")
	}
}
