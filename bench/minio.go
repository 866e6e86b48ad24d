package bench

import (
	"context"
	"fmt"
	"os"
	"time"

	miniogo "github.com/minio/minio-go/v7"

	"github.com/sediment-io/sediment/storage/objectstore/miniotest"
)

// localMinIO is a MinIO server the run starts for `--minio`: the binary
// from ./.bin/minio (make minio) or SEDIMENT_MINIO, its data in a
// temporary directory, on loopback ports.
type localMinIO struct {
	srv *miniotest.Server
	dir string
}

const minioBucket = "sediment-bench"

func startMinIO(ctx context.Context) (*localMinIO, error) {
	dir, err := os.MkdirTemp("", "sediment-bench-minio-")
	if err != nil {
		return nil, fmt.Errorf("bench: minio: %w", err)
	}
	srv, err := miniotest.Launch(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("bench: minio: %w", err)
	}
	m := &localMinIO{srv: srv, dir: dir}
	if err := m.createBucket(ctx); err != nil {
		m.stop()
		return nil, err
	}
	return m, nil
}

// createBucket makes the bucket, retrying while the server settles.
func (m *localMinIO) createBucket(ctx context.Context) error {
	cl, err := m.srv.Client()
	if err != nil {
		return fmt.Errorf("bench: minio client: %w", err)
	}
	for range 60 {
		err = cl.MakeBucket(ctx, minioBucket, miniogo.MakeBucketOptions{Region: miniotest.Region})
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return fmt.Errorf("bench: minio: create bucket: %w", err)
}

// objectStore is the broker's --object-store URL (the s3 backend).
func (m *localMinIO) objectStore() string { return m.srv.S3URL(minioBucket, "broker") }

// objectStoreAt is objectStore reached through endpoint (a proxy).
func (m *localMinIO) objectStoreAt(endpoint string) string {
	return fmt.Sprintf("s3://%s/broker?endpoint=%s&region=%s&path_style=true", minioBucket, endpoint, miniotest.Region)
}

// env is what the broker needs to authenticate to the server.
func (m *localMinIO) env() []string {
	return append(m.srv.Env(), "AWS_CONFIG_FILE="+os.DevNull, "AWS_SHARED_CREDENTIALS_FILE="+os.DevNull, "AWS_EC2_METADATA_DISABLED=true")
}

func (m *localMinIO) stop() error {
	err := m.srv.Stop()
	os.RemoveAll(m.dir)
	return err
}
