package miniotest

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	miniogo "github.com/minio/minio-go/v7"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestStopRestart: a stopped server refuses connections; restarted, it is
// on the same port with the same data.
func TestStopRestart(t *testing.T) {
	s := Start(t)
	bucket := s.NewBucket(t)
	client, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	put := func() error {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		_, err := client.PutObject(ctx, bucket, "k", bytes.NewReader([]byte("v")), 1, miniogo.PutObjectOptions{})
		return err
	}
	if err := put(); err != nil {
		t.Fatal(err)
	}
	addr := s.Addr
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := put(); err == nil {
		t.Fatal("put to a stopped server succeeded")
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if s.Addr != addr {
		t.Fatalf("restarted on %s, was %s", s.Addr, addr)
	}
	s.CreateBucket(t, bucket) // waits until the restarted server serves requests; the bucket exists
	if _, err := client.StatObject(t.Context(), bucket, "k", miniogo.StatObjectOptions{}); err != nil {
		t.Fatalf("object written before the restart: %v", err)
	}
}

// TestMissingBinary: without the binary, the error says how to get it.
func TestMissingBinary(t *testing.T) {
	t.Setenv("SEDIMENT_MINIO", "/nonexistent/minio")
	_, err := binary()
	if err == nil || !strings.Contains(err.Error(), "run `make test` (installs MinIO into ./.bin) or set SEDIMENT_MINIO") {
		t.Fatalf("binary() = %v, want the message naming make test and SEDIMENT_MINIO", err)
	}
}

// TestFaultProxyCounts: the proxy forwards, counts and fails requests.
func TestFaultProxyCounts(t *testing.T) {
	s := Shared(t)
	bucket := s.NewBucket(t)
	p := NewFaultProxy(t, s.Addr)
	client, err := miniogo.New(p.Addr, &miniogo.Options{Creds: staticCreds(), Region: Region, MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	p.Inject(Unavailable, 1, Method("HEAD"))
	if _, err := client.StatObject(t.Context(), bucket, "missing", miniogo.StatObjectOptions{}); miniogo.ToErrorResponse(err).StatusCode != 503 {
		t.Fatalf("first HEAD = %v, want the injected 503", err)
	}
	if _, err := client.StatObject(t.Context(), bucket, "missing", miniogo.StatObjectOptions{}); miniogo.ToErrorResponse(err).StatusCode != 404 {
		t.Fatalf("second HEAD = %v, want MinIO's 404", err)
	}
	if n := p.Requests("HEAD"); n != 2 {
		t.Fatalf("%d HEAD requests counted, want 2", n)
	}
}
