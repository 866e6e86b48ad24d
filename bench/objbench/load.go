package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	miniogo "github.com/minio/minio-go/v7"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/storage/objectstore/miniotest"
)

const (
	recordSize = 1024
	topic      = "bench"
	gb         = 1e9
	mb         = 1 << 20
)

// runTarget measures one bucket: produce size bytes, wait for the uploads,
// restart gracefully, read everything back. When plainGet is set it is
// called, with the broker stopped, between the catch-up reads of the
// upload objects and compaction: the baseline for the first.
func runTarget(ctx context.Context, dir, storeURL string, env []string, size int64, plainGet func() (baseline, error)) (*figure, error) {
	var flags []string
	if storeURL != "" {
		flags = []string{"--object-store", storeURL}
	}
	b, err := startBroker(dir, env, flags...)
	if err != nil {
		return nil, err
	}
	defer b.stop()
	if err := createTopic(ctx, b.addr, 8); err != nil {
		return nil, err
	}
	f := &figure{}
	if err := measureProduce(ctx, b, size, f); err != nil {
		return nil, err
	}
	if err := b.restart(); err != nil { // caches start cold
		return nil, err
	}
	if f.catchUp, err = measureCatchUps(ctx, b); err != nil {
		return nil, err
	}
	if plainGet != nil {
		if err := b.stop(); err != nil {
			return nil, fmt.Errorf("graceful stop: %w", err)
		}
		base, err := plainGet()
		if err != nil {
			return nil, err
		}
		f.Baseline = &base
		f.VsBaselinePct = base.pctOf(base.Bytes, f.Seconds)
		if err := b.start(); err != nil {
			return nil, err
		}
	}
	if f.Compacted, err = measureCompacted(ctx, b); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "%s: after compaction of %.0f segments: catch-up %.1f MB/s (runs %.0f; objects %.1f MB/s), %.1f GETs/GB of %.0f KiB\n",
		dir, f.Compacted.Segments, f.Compacted.MBs, f.Compacted.Runs, f.Compacted.ObjectMBs, f.Compacted.GetsPerGB, f.Compacted.AvgGetKiB)
	fmt.Fprintf(os.Stderr, "%s: produce %.1f MB/s, %.1f PUTs/GB; catch-up %.1f MB/s (runs %.0f; objects %.1f MB/s), %.1f GETs/GB of %.0f KiB\n",
		dir, f.ProduceMBs, f.PutsPerGB, f.MBs, f.Runs, f.ObjectMBs, f.GetsPerGB, f.AvgGetKiB)
	return f, nil
}

// measureProduce produces size bytes and waits until they are uploaded.
func measureProduce(ctx context.Context, b *broker, size int64, f *figure) error {
	before := b.metrics()
	records := size / recordSize
	elapsed, err := produce(ctx, b.addr, records)
	if err != nil {
		return err
	}
	written := float64(records * recordSize)
	f.ProduceMBs = written / mb / elapsed.Seconds()
	after := b.waitUploaded()
	puts := after.Sum("sediment_objectstore_requests_total", `op="put"`, `outcome="ok"`) -
		before.Sum("sediment_objectstore_requests_total", `op="put"`, `outcome="ok"`)
	f.PutsPerGB = puts / (written / gb)
	return nil
}

// catchUpRuns is how many times each catch-up read is measured, each from
// a restarted broker and a cold page cache; the median run is reported, as
// the median plain GET is the baseline.
const catchUpRuns = 3

// measureCatchUps measures the catch-up read catchUpRuns times (the first
// on b as it is, freshly started) and returns the median run's figures,
// with every run's rate.
func measureCatchUps(ctx context.Context, b *broker) (catchUp, error) {
	var runs []catchUp
	var rates []float64
	for i := range catchUpRuns {
		if i > 0 {
			if err := b.restart(); err != nil {
				return catchUp{}, err
			}
		}
		c, err := measureCatchUp(ctx, b)
		if err != nil {
			return catchUp{}, err
		}
		runs, rates = append(runs, c), append(rates, c.MBs)
	}
	slices.SortFunc(runs, func(a, b catchUp) int { return cmp.Compare(a.Seconds, b.Seconds) })
	m := runs[len(runs)/2]
	m.Runs = rates
	return m, nil
}

// measureCatchUp reads the topic from the start on a freshly started
// broker, with cold caches.
func measureCatchUp(ctx context.Context, b *broker) (catchUp, error) {
	if err := beforeRead(); err != nil {
		return catchUp{}, err
	}
	start := b.metrics()
	stopProfile := b.profile("catchup")
	read, elapsed, err := consume(ctx, b.addr)
	stopProfile()
	if err != nil {
		return catchUp{}, err
	}
	end := b.metrics()
	delta := func(metric string, labels ...string) float64 {
		return end.Sum(metric, labels...) - start.Sum(metric, labels...)
	}
	gets := delta("sediment_objectstore_requests_total", `op="get`, `outcome="ok"`)
	objBytes := delta("sediment_objectstore_bytes_total", `direction="in"`)
	return catchUp{
		Seconds:   elapsed.Seconds(),
		MBs:       float64(read) / mb / elapsed.Seconds(),
		ObjectMBs: objBytes / mb / elapsed.Seconds(),
		GetsPerGB: gets / (float64(read) / gb),
		AvgGetKiB: objBytes / gets / 1024,
	}, nil
}

func createTopic(ctx context.Context, addr string, partitions int32) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	return err
}

// produce sends n records of 1 KiB of random bytes from 4 producers
// (acks=all, linger 5 ms, no compression) and returns the time until the
// last acknowledgement.
func produce(ctx context.Context, addr string, n int64) (time.Duration, error) {
	value := make([]byte, recordSize)
	rand.Read(value)
	var (
		issued   atomic.Int64
		firstErr atomic.Value
		wg       sync.WaitGroup
	)
	start := time.Now()
	for range 4 {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
			kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(5*time.Millisecond),
			kgo.MaxBufferedRecords(20000), kgo.ProducerBatchCompression(kgo.NoCompression()))
		if err != nil {
			return 0, err
		}
		defer cl.Close()
		wg.Go(func() {
			for issued.Add(1) <= n {
				cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
					if err != nil {
						firstErr.CompareAndSwap(nil, err)
					}
				})
			}
			if err := cl.Flush(ctx); err != nil {
				firstErr.CompareAndSwap(nil, err)
			}
		})
	}
	wg.Wait()
	if e := firstErr.Load(); e != nil {
		return 0, fmt.Errorf("produce: %v", e)
	}
	return time.Since(start), nil
}

// consume reads the topic from offset 0 to its end with one consumer
// (fetches of up to 8 MiB per partition) and returns the record bytes read
// and the time taken.
func consume(ctx context.Context, addr string) (int64, time.Duration, error) {
	adm, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return 0, 0, err
	}
	ends, err := kadm.NewClient(adm).ListEndOffsets(ctx, topic)
	adm.Close()
	if err != nil {
		return 0, 0, err
	}
	want := int64(0)
	ends.Each(func(o kadm.ListedOffset) { want += o.Offset })
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxPartitionBytes(8<<20))
	if err != nil {
		return 0, 0, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	start := time.Now()
	var got, bytes int64
	for got < want && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		if err := fs.Err(); err != nil && ctx.Err() == nil {
			return 0, 0, fmt.Errorf("fetch: %w", err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got++
			bytes += int64(len(r.Value))
		})
	}
	if got < want {
		return 0, 0, fmt.Errorf("read %d of %d records: %v", got, want, ctx.Err())
	}
	return bytes, time.Since(start), nil
}

// sequentialGet reads every object under prefix, one whole-object GET
// after another, with a plain minio-go client, and returns the rate.
func sequentialGet(ctx context.Context, srv *miniotest.Server, bucket, prefix string) (baseline, error) {
	client, err := srv.Client()
	if err != nil {
		return baseline{}, err
	}
	var keys []string
	for o := range client.ListObjectsIter(ctx, bucket, miniogo.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			return baseline{}, o.Err
		}
		keys = append(keys, o.Key)
	}
	start := time.Now()
	var total int64
	for _, key := range keys {
		obj, err := client.GetObject(ctx, bucket, key, miniogo.GetObjectOptions{})
		if err != nil {
			return baseline{}, err
		}
		n, err := io.Copy(io.Discard, obj)
		obj.Close()
		if err != nil {
			return baseline{}, fmt.Errorf("get %s: %w", key, err)
		}
		total += n
	}
	secs := time.Since(start).Seconds()
	return baseline{MBs: float64(total) / mb / secs, Objects: len(keys), Bytes: total}, nil
}

// createBucket makes the bucket the remote targets use.
func createBucket(srv *miniotest.Server, name string) error {
	client, err := srv.Client()
	if err != nil {
		return err
	}
	return client.MakeBucket(context.Background(), name, miniogo.MakeBucketOptions{Region: miniotest.Region})
}

// measureCompacted lets the compactor run (maintenance every second) until
// it has nothing left to do, restarts with cold caches and the default
// cadence, and reads the topic again.
func measureCompacted(ctx context.Context, b *broker) (*compacted, error) {
	defaults := b.flags
	b.flags = append(slices.Clip(defaults), "--maintain-interval", "1s", "--object-gc-grace", "1s")
	if err := b.restart(); err != nil {
		return nil, err
	}
	done := -1.0
	for i := 0; i < 300; i++ { // up to 5 minutes
		time.Sleep(2 * time.Second)
		n := b.metrics().Sum("sediment_compaction_segments_total")
		if n == done && n > 0 {
			break
		}
		done = n
	}
	// The read runs with the default maintenance cadence, as a user's
	// broker would: a pass every second re-reads the whole index and
	// took a tenth of the broker's CPU while it served the read.
	b.flags = defaults
	if err := b.restart(); err != nil {
		return nil, err
	}
	c, err := measureCatchUps(ctx, b)
	if err != nil {
		return nil, err
	}
	return &compacted{c, done}, nil
}

// measureMemoryCeiling produces size bytes into a broker whose tail cache
// holds them all and reads them back at once with the same consumer as the
// catch-up reads: the rate of the Kafka path alone (client, protocol,
// copies), with no object store and no disk read, on this machine.
func measureMemoryCeiling(ctx context.Context, dir string, size int64) (float64, error) {
	b, err := startBroker(dir, nil, "--tail-cache-bytes", fmt.Sprint(size+size/4), "--memory-limit", "-1")
	if err != nil {
		return 0, err
	}
	defer b.stop()
	if err := createTopic(ctx, b.addr, 8); err != nil {
		return 0, err
	}
	if _, err := produce(ctx, b.addr, size/recordSize); err != nil {
		return 0, err
	}
	before := b.metrics()
	read, elapsed, err := consume(ctx, b.addr)
	if err != nil {
		return 0, err
	}
	after := b.metrics()
	if tail := after.Sum("sediment_fetch_reads_total", `source="tail"`) - before.Sum("sediment_fetch_reads_total", `source="tail"`); tail == 0 {
		return 0, fmt.Errorf("memory ceiling: no fetch was served from the tail cache")
	}
	return float64(read) / mb / elapsed.Seconds(), nil
}

// measureDrain stops MinIO, produces size bytes into a broker on it (they
// wait in the WAL), starts MinIO again and times the upload of the backlog.
func measureDrain(ctx context.Context, dir string, srv *miniotest.Server, size int64) (float64, float64, error) {
	flags := []string{"--object-store", srv.S3URL("bench", "drain"), "--wal-max-bytes", fmt.Sprint(4 * size)}
	b, err := startBroker(dir, srv.Env(), flags...)
	if err != nil {
		return 0, 0, err
	}
	defer b.stop()
	if err := createTopic(ctx, b.addr, 8); err != nil {
		return 0, 0, err
	}
	if err := srv.Stop(); err != nil {
		return 0, 0, err
	}
	if _, err := produce(ctx, b.addr, size/recordSize); err != nil {
		return 0, 0, err
	}
	backlog := b.metrics().Sum("sediment_upload_pending_bytes")
	start := time.Now()
	if err := srv.Restart(); err != nil {
		return 0, 0, err
	}
	for i := 0; i < 6000; i++ {
		if b.metrics().Sum("sediment_upload_pending_bytes") == 0 {
			return time.Since(start).Seconds(), backlog, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return 0, 0, fmt.Errorf("backlog not drained 5 minutes after MinIO came back")
}
