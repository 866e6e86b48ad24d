package minio_test

import (
	"os"
	"strings"
	"testing"

	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/internal/remote"
	"github.com/sediment-io/sediment/storage/objectstore/internal/remote/remotetest"
	"github.com/sediment-io/sediment/storage/objectstore/minio"
	"github.com/sediment-io/sediment/storage/objectstore/miniotest"
	"github.com/sediment-io/sediment/storage/objectstore/objectstoretest"
)

func TestMain(m *testing.M) { os.Exit(miniotest.Main(m)) }

// open returns a store on bucket/prefix of the server at addr, closed when
// the test ends.
func open(t *testing.T, addr, bucket, prefix string, tuning minio.Tuning) objectstore.Store {
	t.Helper()
	s, err := minio.Open(minio.Options{Endpoint: addr, Bucket: bucket, Prefix: prefix, Tuning: tuning})
	if err != nil {
		t.Fatalf("minio.Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConformance runs the objectstore suite against a real MinIO.
func TestConformance(t *testing.T) {
	srv := miniotest.Shared(t)
	s := open(t, srv.Addr, srv.NewBucket(t), "", minio.Tuning{})
	objectstoretest.Run(t, func(*testing.T) objectstore.Store { return s }, objectstoretest.NoNestedObjects())
}

// opener opens minio stores for the shared backend tests.
func opener(t *testing.T, endpoint, bucket, prefix string, tuning remote.Tuning) objectstore.Store {
	return open(t, strings.TrimPrefix(endpoint, "http://"), bucket, prefix, tuning)
}

// TestConformanceMultipart runs the suite with multipart uploads above
// 8 MiB in 5 MiB parts, so that its large objects go up in parts.
func TestConformanceMultipart(t *testing.T) {
	srv := miniotest.Shared(t)
	s := open(t, srv.Addr, srv.NewBucket(t), "multipart", minio.Tuning{MultipartThreshold: 8 << 20, PartSize: 5 << 20})
	objectstoretest.Run(t, func(*testing.T) objectstore.Store { return s }, objectstoretest.NoNestedObjects())
}

func TestMultipart(t *testing.T)   { remotetest.Multipart(t, miniotest.Shared(t), opener) }
func TestRetry(t *testing.T)       { remotetest.Retry(t, miniotest.Shared(t), opener) }
func TestCredentials(t *testing.T) { remotetest.Credentials(t, miniotest.Shared(t), opener) }
func TestPrefix(t *testing.T)      { remotetest.Prefix(t, miniotest.Shared(t), opener) }

// TestMinioCredentials: with no AWS variables, MinIO's own
// (MINIO_ROOT_USER and MINIO_ROOT_PASSWORD) sign the requests.
func TestMinioCredentials(t *testing.T) {
	srv := miniotest.Shared(t)
	bucket := srv.NewBucket(t)
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	t.Setenv("MINIO_ROOT_USER", miniotest.AccessKey)
	t.Setenv("MINIO_ROOT_PASSWORD", miniotest.SecretKey)
	s := open(t, srv.Addr, bucket, "", minio.Tuning{})
	if _, err := s.Put(t.Context(), "k", []byte("v"), objectstore.Condition{}); err != nil {
		t.Fatalf("Put with MINIO_ROOT_USER/MINIO_ROOT_PASSWORD: %v", err)
	}
}
