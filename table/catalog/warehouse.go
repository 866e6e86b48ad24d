package catalog

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"

	_ "github.com/apache/iceberg-go/io/gocloud/s3" // the s3:// file IO for warehouses on S3 and MinIO

	"github.com/sediment-io/sediment/storage/objectstore/storeurl"
)

// warehouseDir is the folder (key prefix) of the warehouse inside the
// broker's object store; the broker's own objects live beside it, under
// data/ and seg/, and its garbage collection never looks here.
const warehouseDir = "tables"

// Warehouse is the warehouse root inside the broker's object store (the
// folder/prefix "tables/" under it) and the iceberg-go IO properties
// (s3.endpoint, s3.region, credentials from the standard AWS_* variables,
// path style) that reach it.
//
//	file://DIR                       file:///ABS/DIR/tables
//	s3://BUCKET/PREFIX?endpoint=..   s3://BUCKET/PREFIX/tables
//	minio://HOST:PORT/BUCKET/PREFIX  s3://BUCKET/PREFIX/tables, endpoint http(s)://HOST:PORT, path style
func Warehouse(opts Options) (location string, props iceberg.Properties, err error) {
	raw := opts.ObjectStoreURL
	if raw == "" {
		if opts.DataDir == "" {
			return "", nil, errors.New("catalog: warehouse: no --object-store and no --data-dir")
		}
		// The folder as it is: written into a URL, a % or # in it would mean something else.
		return fileWarehouse(filepath.Join(opts.DataDir, "objects"))
	}
	if err := storeurl.Validate(raw); err != nil {
		return "", nil, fmt.Errorf("catalog: warehouse: --object-store: %w", err)
	}
	u, err := url.Parse(raw)
	if err != nil { // Validate parsed it already
		return "", nil, fmt.Errorf("catalog: warehouse: --object-store: %w", err)
	}
	switch u.Scheme {
	case "file":
		return fileWarehouse(u.Host + u.Path)
	case "s3":
		return s3Warehouse(u)
	case "minio":
		return minioWarehouse(u)
	}
	return "", nil, fmt.Errorf("catalog: warehouse: --object-store scheme %q has no Iceberg file IO", u.Scheme)
}

// fileWarehouse is the warehouse in the local bucket folder bucket; a
// relative folder is made absolute, as Iceberg locations must be.
func fileWarehouse(bucket string) (string, iceberg.Properties, error) {
	dir, err := filepath.Abs(filepath.Join(bucket, warehouseDir))
	if err != nil {
		return "", nil, fmt.Errorf("catalog: warehouse: %w", err)
	}
	loc := url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}
	return loc.String(), iceberg.Properties{}, nil
}

// s3Warehouse is the warehouse in an s3:// bucket, with the same endpoint,
// region and addressing style as the broker's own objects.
func s3Warehouse(u *url.URL) (string, iceberg.Properties, error) {
	q := u.Query()
	props := s3Props(q.Get("region"))
	if e := q.Get("endpoint"); e != "" {
		props[icebergio.S3EndpointURL] = e
	}
	pathStyle, _ := strconv.ParseBool(q.Get("path_style")) // validated: "" or a bool
	props[icebergio.S3ForceVirtualAddressing] = strconv.FormatBool(!pathStyle)
	return s3Location(u.Host, u.Path), props, nil
}

// minioWarehouse is the warehouse in a minio:// bucket, reached through
// MinIO's S3 API with path-style addressing.
func minioWarehouse(u *url.URL) (string, iceberg.Properties, error) {
	q := u.Query()
	scheme := "https"
	if secure, err := strconv.ParseBool(q.Get("secure")); err == nil && !secure {
		scheme = "http"
	}
	props := s3Props(q.Get("region"))
	props[icebergio.S3EndpointURL] = scheme + "://" + u.Host
	props[icebergio.S3ForceVirtualAddressing] = "false"
	if props[icebergio.S3AccessKeyID] == "" && os.Getenv("MINIO_ROOT_USER") != "" {
		props[icebergio.S3AccessKeyID] = os.Getenv("MINIO_ROOT_USER")
		props[icebergio.S3SecretAccessKey] = os.Getenv("MINIO_ROOT_PASSWORD")
	}
	bucket, prefix, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	return s3Location(bucket, prefix), props, nil
}

// s3Location is s3://BUCKET/PREFIX/tables.
func s3Location(bucket, prefix string) string {
	return "s3://" + bucket + "/" + path.Join(strings.Trim(prefix, "/"), warehouseDir)
}

// s3Props are the region and the credentials of the standard AWS
// variables; without AWS_ACCESS_KEY_ID, iceberg-go's S3 IO falls back to
// the AWS SDK's default chain (profiles, instance roles).
func s3Props(region string) iceberg.Properties {
	if region == "" {
		region = os.Getenv("AWS_REGION")
	}
	if region == "" {
		region = "us-east-1"
	}
	props := iceberg.Properties{icebergio.S3Region: region}
	if id := os.Getenv("AWS_ACCESS_KEY_ID"); id != "" {
		props[icebergio.S3AccessKeyID] = id
		props[icebergio.S3SecretAccessKey] = os.Getenv("AWS_SECRET_ACCESS_KEY")
		if tok := os.Getenv("AWS_SESSION_TOKEN"); tok != "" {
			props[icebergio.S3SessionToken] = tok
		}
	}
	return props
}
