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

// TestMinIOCrashDuringIdempotentProduce is TestCrashDuringIdempotentProduce
// with the bucket on a real MinIO: the broker is killed (SIGKILL, or by
// itself between an object PUT and its metadata commit) during sustained
// idempotent produce and restarted on the same data dir and bucket while
// the producer keeps retrying; every acknowledged record is read back
// exactly once, offsets contiguous.
func TestMinIOCrashDuringIdempotentProduce(t *testing.T) {
	srv := miniotest.Shared(t)
	kill := func(t *testing.T, p *brokerProc) { p.kill() }
	for _, c := range []struct {
		name, scheme string
		env          []string // for the first run
		crash        func(t *testing.T, p *brokerProc)
		wantLog      string
		flags        []string
	}{
		{"sigkill s3", "s3", nil, kill, "batches_recovered", nil},
		{"kill between object PUT and metadata commit s3", "s3", []string{"SEDIMENT_TEST_CRASH_AFTER_PUTS=8"},
			func(t *testing.T, p *brokerProc) {
				if err := p.wait(); err == nil {
					t.Fatal("broker exited cleanly; the crash seam did not fire")
				}
			}, "batches_recovered", nil},
		{"sigkill with --durability object s3", "s3", nil, kill, "log recovered", []string{"--durability", "object"}},
		{"sigkill minio", "minio", nil, kill, "batches_recovered", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			store, _ := minioStore(t, srv, c.scheme, "crash")
			flags := append(append([]string{"--upload-interval", "100ms"}, store...), c.flags...)
			crashAndRecover(t, srv, flags, c.env, c.crash, c.wantLog)
		})
	}
}

// crashAndRecover starts a broker with flags (and env for the first run),
// produces 20,000 records with an idempotent producer that retries
// forever, crashes the broker with crash once records are acknowledged (or
// lets env's crash seam pick the moment), restarts it with flags and checks
// that every acknowledged record is there exactly once.
func crashAndRecover(t *testing.T, srv *miniotest.Server, flags, env []string,
	crash func(*testing.T, *brokerProc), wantLog string) {
	t.Helper()
	dir := t.TempDir()
	p := startProc(t, dir, "", append(srv.Env(), env...), flags...)
	ctx, cancel := ctxFor(t, 180*time.Second)
	defer cancel()
	createTopics(t, p.addr, "crash", 4)
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.ProducerLinger(2*time.Millisecond),
		kgo.RecordRetries(1<<30), kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	acks := &ackLog{acked: map[string]bool{}}
	const total = 20000
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		produceSequence(ctx, cl, "crash", total, acks)
	}()
	if env == nil {
		acks.waitAcked(t, 3000)
	}
	crash(t, p)
	if n := acks.count(); n == total {
		t.Fatalf("all %d records were acknowledged before the crash: nothing was tested", n)
	}
	t.Logf("crashed with %d of %d records acknowledged", acks.count(), total)
	p2 := startProc(t, dir, p.addr, srv.Env(), flags...)
	if logs := p2.logs.String(); !strings.Contains(logs, wantLog) {
		t.Fatalf("restarted broker did not log %q:\n%s", wantLog, logs)
	}
	<-produced
	acks.done.Wait()
	checkExactlyOnce(t, readTopic(t, p2.addr, "crash"), acks)
	if acks.count() != total {
		t.Fatalf("%d of %d records acknowledged after the restart", acks.count(), total)
	}
}
