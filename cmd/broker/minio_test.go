package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	miniogo "github.com/minio/minio-go/v7"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/storage/objectstore/miniotest"
)

// minioStore creates a fresh bucket on the package's MinIO and returns the
// --object-store flags of bucket/prefix for scheme (s3 or minio), and the
// bucket.
func minioStore(t *testing.T, srv *miniotest.Server, scheme, prefix string) ([]string, string) {
	t.Helper()
	bucket := srv.NewBucket(t)
	url := srv.S3URL(bucket, prefix)
	if scheme == "minio" {
		url = srv.MinioURL(bucket, prefix)
	}
	return []string{"--object-store", url}, bucket
}

// countObjects returns how many objects bucket holds under prefix whose
// keys end in suffix ("" for all).
func countObjects(t *testing.T, srv *miniotest.Server, bucket, prefix, suffix string) int {
	t.Helper()
	client, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for o := range client.ListObjectsIter(t.Context(), bucket, miniogo.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("list %s/%s: %v", bucket, prefix, o.Err)
		}
		if strings.HasSuffix(o.Key, suffix) {
			n++
		}
	}
	return n
}

// TestMinIOFranz50k: 50,000 records of 1 KiB over 8 partitions with
// acks=all into a broker whose bucket is a real MinIO (s3:// URL), then a
// graceful restart, so that every record is read back from MinIO, in order
// per partition and byte for byte.
func TestMinIOFranz50k(t *testing.T) {
	const total, partitions = 50_000, 8
	srv := miniotest.Shared(t)
	store, bucket := minioStore(t, srv, "s3", "franz")
	dir := t.TempDir()
	p := startProc(t, dir, "", srv.Env(), store...)
	createTopics(t, p.addr, "bulk", partitions)
	produceNumbered(t, p.addr, "bulk", total, partitions)
	if err := p.terminate(); err != nil {
		t.Fatalf("graceful shutdown: %v\n%s", err, p.logs.String())
	}
	if n := countObjects(t, srv, bucket, "franz/", ""); n == 0 {
		t.Fatalf("no object in MinIO bucket %s under franz/ after a graceful shutdown", bucket)
	}
	p2 := startProc(t, dir, "", srv.Env(), store...)
	checkNumbered(t, readTopic(t, p2.addr, "bulk"), total, partitions)
	if got := p2.metric("sediment_fetch_reads_total", `source="object"`); got == 0 {
		t.Fatalf("no fetch was served by the object store\n%s", p2.logs.String())
	}
	if got := p2.metric("sediment_objectstore_requests_total", `backend="s3"`, `op="get_range"`, `outcome="ok"`); got == 0 {
		t.Fatal("no ranged GET from MinIO recorded")
	}
}

// produceNumbered produces records 0..total-1 (payload(i)) round-robin
// over the partitions, acks=all, and waits for every acknowledgement.
func produceNumbered(t *testing.T, addr, topic string, total, partitions int) {
	t.Helper()
	ctx := testCtx(t, 5*time.Minute)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(5*time.Millisecond), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	for i := range total {
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Partition: int32(i % partitions), Value: payload(i)}, func(_ *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				mu.Lock()
				firstErr = err
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("produce: %v", firstErr)
	}
}

// checkNumbered checks that each partition holds its share of records
// 0..total-1 in order, byte for byte.
func checkNumbered(t *testing.T, parts map[int32][]*kgo.Record, total, partitions int) {
	t.Helper()
	for p := range int32(partitions) {
		recs := parts[p]
		if len(recs) != total/partitions {
			t.Fatalf("partition %d: %d records, want %d", p, len(recs), total/partitions)
		}
		for j, r := range recs {
			if i := j*partitions + int(p); !bytes.Equal(r.Value, payload(i)) {
				t.Fatalf("partition %d offset %d: wrong bytes (want record %d)", p, j, i)
			}
		}
	}
}
