// Package storeurl opens an object store from the URL given to
// --object-store, choosing the backend by scheme:
//
//	file://DIR
//	    a local folder that behaves like a bucket (localfs)
//	s3://BUCKET[/PREFIX][?endpoint=URL&region=R&path_style=true]
//	    Amazon S3 or any S3-compatible server, on aws-sdk-go-v2 (s3);
//	    endpoint is the server's base URL (empty: AWS), path_style puts
//	    the bucket in the path as MinIO wants
//	minio://HOST[:PORT]/BUCKET[/PREFIX][?secure=false&region=R]
//	    a MinIO (or other S3-compatible) server, on minio-go (minio);
//	    secure=true (the default) uses https
//
// PREFIX, when given, is prepended to every key ("PREFIX/key"), so that
// several clusters can share a bucket; listings strip it again. Both
// remote schemes take credentials from the standard AWS variables
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) and
// profiles (AWS_PROFILE); minio:// also from MINIO_ROOT_USER and
// MINIO_ROOT_PASSWORD. The region is region=, else AWS_REGION, else
// us-east-1. Both also accept, for tuning:
//
//	multipart_threshold=SIZE  objects above go up in parts (default 64MiB)
//	part_size=SIZE            size of each part (default 16MiB, at least 5MiB)
//	request_timeout=DURATION  one attempt's deadline before its body (default 10s)
//	max_attempts=N            attempts per request, retries included (default 5)
//
// where SIZE is a byte count with an optional KiB, MiB or GiB suffix.
//
// Validate checks a URL without opening anything, for the broker's flag
// validation; its errors say what is wrong and what is accepted.
package storeurl

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/localfs"
	"github.com/sediment-io/sediment/storage/objectstore/minio"
	"github.com/sediment-io/sediment/storage/objectstore/s3"
	"github.com/sediment-io/sediment/storage/objectstore/storemetrics"
)

// Options are what Open needs besides the URL. The zero value opens the
// store without metrics.
type Options struct {
	// Registerer, when set, gets the sediment_objectstore_* metrics of
	// every call (see storemetrics), labelled with the backend.
	Registerer prometheus.Registerer
}

// Validate reports whether raw is a usable --object-store URL; the error
// says what is wrong and what the accepted forms are.
func Validate(raw string) error {
	_, err := parse(raw)
	return err
}

// Open opens the store raw names. A remote store sends no request yet: a
// wrong bucket or credential shows at the first call.
func Open(ctx context.Context, raw string, opts Options) (objectstore.Store, error) {
	sp, err := parse(raw)
	if err != nil {
		return nil, fmt.Errorf("storeurl: %w", err)
	}
	var m *storemetrics.Metrics
	if opts.Registerer != nil {
		if m, err = storemetrics.New(opts.Registerer); err != nil {
			return nil, fmt.Errorf("storeurl: metrics: %w", err)
		}
		sp.tuning.OnRetry = m.OnRetry(sp.scheme)
	}
	store, err := open(ctx, sp)
	if err != nil {
		return nil, err
	}
	if m != nil {
		store = storemetrics.Wrap(store, sp.scheme, m)
	}
	return store, nil
}

// open opens the backend sp names.
func open(ctx context.Context, sp *spec) (objectstore.Store, error) {
	switch sp.scheme {
	case "file":
		return localfs.Open(sp.dir)
	case "s3":
		return s3.Open(ctx, s3.Options{Bucket: sp.bucket, Prefix: sp.prefix, Endpoint: sp.endpoint,
			Region: sp.region, PathStyle: sp.pathStyle, Tuning: sp.tuning})
	case "minio":
		return minio.Open(minio.Options{Endpoint: sp.endpoint, Secure: sp.secure, Bucket: sp.bucket,
			Prefix: sp.prefix, Region: sp.region, Tuning: sp.tuning})
	}
	return nil, fmt.Errorf("storeurl: scheme %q is not supported", sp.scheme)
}
