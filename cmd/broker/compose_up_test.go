//go:build compose

package main

// `make compose` brings docker-compose.yml up for real, as a user's
// `docker compose up` does: the image built from ./Dockerfile, MinIO, the
// bucket step and the broker, reached from this machine through the
// published ports. It needs a container engine with compose (Docker's
// plugin, or podman-compose: see compose_engine_test.go) and the ports
// 9000, 9001, 9092 and 9644 free; it is not in `make test`, whose machines
// have no engine. A missing engine is a failure that says so, never a skip.

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	miniogo "github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// composeProject keeps the test's containers and volumes apart from a
// developer's own `docker compose up` of the same file.
const composeProject = "sediment-compose-test"

// TestComposeUp: `docker compose up` builds the image and starts MinIO,
// the bucket and the broker, all healthy; the broker runs as the image's
// non-root user; a Kafka client on this machine produces to localhost:9092
// with acks=all; the broker's objects appear in the bucket under its
// prefix; the broker container is killed with SIGKILL and started again,
// and every acknowledged record is read back in order, byte for byte; the
// broker's /readyz and the MinIO console answer on their published ports.
func TestComposeUp(t *testing.T) {
	e := findComposeEngine(t)
	f := readCompose(t)
	minio, broker := f.Services["minio"], f.Services["broker"]
	bucket := createdBucket(t, f.Services["create-bucket"])
	prefix := strings.Trim(brokerObjectStore(t, broker).Path, "/") + "/"

	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("broker logs:\n%s", e.logs("broker"))
		}
		e.down(t)
	})
	e.up(t, f)
	if uid := strings.TrimSpace(e.run(t, time.Minute, "exec", "-T", "broker", "id", "-u")); uid == "" || uid == "0" {
		t.Errorf("the broker container runs as uid %q, want the image's non-root user", uid)
	}

	const addr, topic, total, partitions = "localhost:9092", "compose", 20_000, 4
	createTopics(t, addr, topic, partitions)
	produceNumbered(t, addr, topic, total, partitions)

	store, err := miniogo.New("localhost:9000", &miniogo.Options{
		Creds: credentials.NewStaticV4(minio.Environment["MINIO_ROOT_USER"], minio.Environment["MINIO_ROOT_PASSWORD"], ""),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 2*time.Minute)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		found, err := hasObject(ctx, store, bucket, prefix)
		if found {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no object under %s/%s after the produce (last listing: %v): %v", bucket, prefix, err, ctx.Err())
		case <-tick.C:
		}
	}

	e.run(t, 2*time.Minute, "kill", "-s", "SIGKILL", "broker")
	e.up(t, f)
	checkNumbered(t, readTopic(t, addr, topic), total, partitions)

	for name, target := range map[string]string{"broker /readyz": "http://localhost:9644/readyz", "MinIO console": "http://localhost:9001/"} {
		resp, err := http.Get(target)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s %s: %s", name, target, resp.Status)
		}
	}
}

// hasObject reports whether bucket holds an object under prefix, and the
// listing's error when it failed.
func hasObject(ctx context.Context, c *miniogo.Client, bucket, prefix string) (bool, error) {
	for o := range c.ListObjectsIter(ctx, bucket, miniogo.ListObjectsOptions{Prefix: prefix, Recursive: true, MaxKeys: 1}) {
		return o.Err == nil, o.Err
	}
	return false, nil
}
