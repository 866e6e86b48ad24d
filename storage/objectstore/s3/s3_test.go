package s3_test

import (
	"os"
	"testing"

	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/internal/remote"
	"github.com/sediment-io/sediment/storage/objectstore/internal/remote/remotetest"
	"github.com/sediment-io/sediment/storage/objectstore/miniotest"
	"github.com/sediment-io/sediment/storage/objectstore/objectstoretest"
	"github.com/sediment-io/sediment/storage/objectstore/s3"
)

func TestMain(m *testing.M) { os.Exit(miniotest.Main(m)) }

// open returns a store on bucket/prefix of the endpoint, closed when the
// test ends.
func open(t *testing.T, endpoint, bucket, prefix string, tuning s3.Tuning) objectstore.Store {
	t.Helper()
	s, err := s3.Open(t.Context(), s3.Options{Bucket: bucket, Prefix: prefix, Endpoint: endpoint,
		PathStyle: true, Tuning: tuning})
	if err != nil {
		t.Fatalf("s3.Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConformance runs the objectstore suite against a real MinIO.
func TestConformance(t *testing.T) {
	srv := miniotest.Shared(t)
	s := open(t, srv.Endpoint(), srv.NewBucket(t), "", s3.Tuning{})
	objectstoretest.Run(t, func(*testing.T) objectstore.Store { return s }, objectstoretest.NoNestedObjects())
}

// opener opens s3 stores for the shared backend tests.
func opener(t *testing.T, endpoint, bucket, prefix string, tuning remote.Tuning) objectstore.Store {
	return open(t, endpoint, bucket, prefix, tuning)
}

// TestConformanceMultipart runs the suite with multipart uploads above
// 8 MiB in 5 MiB parts, so that its large objects go up in parts.
func TestConformanceMultipart(t *testing.T) {
	srv := miniotest.Shared(t)
	s := open(t, srv.Endpoint(), srv.NewBucket(t), "multipart", s3.Tuning{MultipartThreshold: 8 << 20, PartSize: 5 << 20})
	objectstoretest.Run(t, func(*testing.T) objectstore.Store { return s }, objectstoretest.NoNestedObjects())
}

func TestMultipart(t *testing.T)   { remotetest.Multipart(t, miniotest.Shared(t), opener) }
func TestRetry(t *testing.T)       { remotetest.Retry(t, miniotest.Shared(t), opener) }
func TestCredentials(t *testing.T) { remotetest.Credentials(t, miniotest.Shared(t), opener) }
func TestPrefix(t *testing.T)      { remotetest.Prefix(t, miniotest.Shared(t), opener) }
