package storeurl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/miniotest"
)

func TestMain(m *testing.M) { os.Exit(miniotest.Main(m)) }

func TestValidate(t *testing.T) {
	for _, ok := range []string{
		"file:///tmp/x", "file://data/objects",
		"s3://bucket", "s3://my.bucket-1/", "s3://bucket/a/b/",
		"s3://bucket/prefix?endpoint=http://127.0.0.1:9000&region=us-east-1&path_style=true",
		"s3://bucket?multipart_threshold=128MiB&part_size=8MiB&request_timeout=1m&max_attempts=3",
		"minio://127.0.0.1:9000/bucket", "minio://minio:9000/bucket/prefix?secure=false&region=eu-west-1",
	} {
		if err := Validate(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for bad, want := range map[string]string{
		"":                                     "unsupported scheme",
		"ftp://x":                              `unsupported scheme "ftp"`,
		"file://":                              "no directory",
		"::":                                   "missing protocol scheme",
		"s3://":                                "no bucket",
		"s3://Bucket/x":                        `bucket "Bucket"`,
		"s3://bucket:9000/x":                   `bucket "bucket:9000"`,
		"s3://bucket/a//b":                     "key prefix",
		"s3://bucket?endpoint=127.0.0.1":       `endpoint "127.0.0.1"`,
		"s3://bucket?path_style=yes":           `path_style="yes"`,
		"s3://bucket?secure=false":             "unknown parameter secure",
		"s3://bucket?part_size=1MiB":           "part_size 1048576: want at least 5MiB",
		"s3://bucket?part_size=lots":           `part_size="lots"`,
		"s3://bucket?multipart_threshold=8MiB": "multipart_threshold 8388608: want at least part_size",
		"s3://bucket?max_attempts=0":           `max_attempts="0"`,
		"s3://bucket?request_timeout=5":        `request_timeout="5"`,
		"s3://bucket?region=a&region=b":        "region given 2 times",
		"minio:///bucket":                      "no server",
		"minio://host:9000":                    "no bucket",
		"minio://host:9000/b":                  `bucket "b"`,
		"minio://host:9000/bucket?secure=no":   `secure="no"`,
		"minio://host:9000/bucket?endpoint=x":  "unknown parameter endpoint",
	} {
		err := Validate(bad)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate(%q) = %v, want an error containing %q", bad, err, want)
		}
	}
}

func TestOpenFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bucket")
	s, err := Open(t.Context(), "file://"+dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Put(t.Context(), "a/b", []byte("x"), objectstore.Condition{}); err != nil {
		t.Fatal(err)
	}
}

// TestOpenRemote: s3:// and minio:// URLs open stores on a real MinIO that
// keep their keys under the URL's prefix and count their calls.
func TestOpenRemote(t *testing.T) {
	srv := miniotest.Shared(t)
	bucket := srv.NewBucket(t)
	reg := prometheus.NewRegistry()
	for _, c := range []struct{ backend, url string }{
		{"s3", srv.S3URL(bucket, "via-s3")},
		{"minio", srv.MinioURL(bucket, "via-minio")},
	} {
		s, err := Open(t.Context(), c.url, Options{Registerer: reg})
		if err != nil {
			t.Fatalf("Open(%s): %v", c.url, err)
		}
		defer s.Close()
		if _, err := s.Put(t.Context(), "k", []byte(c.backend), objectstore.Condition{IfAbsent: true}); err != nil {
			t.Fatalf("%s: Put: %v", c.backend, err)
		}
		if got := counter(t, reg, c.backend); got != 1 {
			t.Errorf("%s: sediment_objectstore_requests_total{backend=%q,op=\"put\",outcome=\"ok\"} = %v, want 1", c.backend, c.backend, got)
		}
	}
	root, err := Open(t.Context(), srv.S3URL(bucket, ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, backend := range []string{"s3", "minio"} {
		if got, err := root.Get(t.Context(), "via-"+backend+"/k"); err != nil || string(got) != backend {
			t.Errorf("Get(via-%s/k) from the bucket's root = %q, %v; want %q", backend, got, err, backend)
		}
	}
}

// counter returns sediment_objectstore_requests_total for a successful put
// of backend.
func counter(t *testing.T, reg *prometheus.Registry, backend string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "sediment_objectstore_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			if labels["backend"] == backend && labels["op"] == "put" && labels["outcome"] == "ok" {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
