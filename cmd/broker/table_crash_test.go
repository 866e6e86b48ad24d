package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/storage/objectstore/miniotest"
)

// backgroundProducer produces {"n":i} JSON records in batches until
// stopped, through broker restarts; acked counts the acknowledged ones.
type backgroundProducer struct {
	acked  atomic.Int64
	cancel context.CancelFunc
	done   chan struct{}
}

func startBackgroundProducer(t *testing.T, addr, topic string) *backgroundProducer {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordDeliveryTimeout(30*time.Second),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	bp := &backgroundProducer{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(bp.done)
		defer cl.Close()
		for n := 0; ctx.Err() == nil; {
			recs := make([]*kgo.Record, 100)
			for i := range recs {
				recs[i] = &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, `{"n":%d,"pad":"%s"}`, n, strings.Repeat("x", 200))}
				n++
			}
			var wg sync.WaitGroup
			wg.Add(len(recs))
			for _, r := range recs {
				cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
					if err == nil {
						bp.acked.Add(1)
					}
					wg.Done()
				})
			}
			wg.Wait()
		}
	}()
	t.Cleanup(bp.stop)
	return bp
}

func (bp *backgroundProducer) stop() {
	bp.cancel()
	<-bp.done
}

// waitMetric polls a broker metric until it reaches min (bounded).
func waitMetric(t *testing.T, p *brokerProc, min float64, name string, labels ...string) {
	t.Helper()
	for range 600 {
		if p.metric(name, labels...) >= min {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	if resp, err := http.Get("http://" + p.http + "/metrics"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "sediment_table") {
				t.Log(l)
			}
		}
	}
	t.Fatalf("%s %v stayed below %v for 60s\n%s", name, labels, min, p.logs.String())
}

// checkTableMatchesTopic stops nothing: with the broker down, it reads the
// table through the catalog, with the broker up the topic, and requires the
// table to hold every record of the topic exactly once, value for value.
func checkTableMatchesTopic(t *testing.T, p *brokerProc, topic, storeURL string) {
	t.Helper()
	log := readTopic(t, p.addr, topic)
	total := 0
	for _, rs := range log {
		total += len(rs)
	}
	waitMetric(t, p, float64(total), "sediment_table_committed_offsets", `table="`+topic+`"`)
	if err := p.terminate(); err != nil {
		t.Fatalf("graceful shutdown: %v\n%s", err, p.logs.String())
	}
	rows := scanTable(t, openCatalog(t, p.dataDir, storeURL), topic)
	if len(rows) != total {
		t.Fatalf("the table holds %d rows, the topic %d records", len(rows), total)
	}
	seen := map[[2]int64]bool{}
	for _, row := range rows {
		part, off := row.partOff()
		key := [2]int64{int64(part), off}
		if seen[key] {
			t.Fatalf("partition %d offset %d is in the table twice", part, off)
		}
		seen[key] = true
		if off >= int64(len(log[part])) || jsonString(row["n"]) != jsonNumberOf(t, log[part][off].Value) {
			t.Fatalf("partition %d offset %d: row n=%v does not match the topic", part, off, row["n"])
		}
	}
}

func jsonNumberOf(t *testing.T, value []byte) string {
	var n int
	if _, err := fmt.Sscanf(string(value), `{"n":%d,`, &n); err != nil {
		t.Fatalf("topic record %q: %v", value, err)
	}
	return fmt.Sprint(n)
}

// TestTableCrashMidConversion SIGKILLs a broker while records stream into
// a table topic and its converter commits every second; after a restart
// (and more records) the table holds every record of the topic exactly
// once.
func TestTableCrashMidConversion(t *testing.T) {
	dir := t.TempDir()
	p := startProc(t, dir, "", nil)
	createTableTopic(t, p.addr, "stream", 3, nil)
	bp := startBackgroundProducer(t, p.addr, "stream")
	waitMetric(t, p, 1, "sediment_table_rows_total", `table="stream"`)
	p.kill()
	acked := bp.acked.Load()
	p = startProc(t, dir, p.addr, nil)
	waitFor(t, "1,000 more records acknowledged after the restart", func() bool {
		return bp.acked.Load() >= acked+1000 || t.Failed()
	})
	bp.stop()
	checkTableMatchesTopic(t, p, "stream", "")
}

// TestTableCrashBeforeCatalogCommit kills the broker (through the crash
// seam) after a commit's Parquet files are written and before the catalog
// commit. After a restart the table holds every record exactly once and
// the unreferenced Parquet file is deleted.
func TestTableCrashBeforeCatalogCommit(t *testing.T) {
	dir := t.TempDir()
	crashBeforeCommit(t, dir, "", nil, func() int { return len(parquetFiles(t, dir)) })
}

// TestTableCrashBeforeCatalogCommitMinIO is the same with the object store
// and the warehouse on a real MinIO.
func TestTableCrashBeforeCatalogCommitMinIO(t *testing.T) {
	srv := miniotest.Shared(t)
	store, bucket := minioStore(t, srv, "s3", "crash")
	for k, v := range envMap(srv.Env()) {
		t.Setenv(k, v)
	}
	crashBeforeCommit(t, t.TempDir(), store[1], store, func() int {
		return countObjects(t, srv, bucket, "crash/tables/", ".parquet")
	})
}

func crashBeforeCommit(t *testing.T, dir, storeURL string, flags []string, parquet func() int) {
	t.Helper()
	crash := []string{"SEDIMENT_TEST_CRASH_BEFORE_TABLE_COMMIT=2"}
	p := startProc(t, dir, "", crash, flags...)
	createTableTopic(t, p.addr, "seam", 2, nil)
	produceValues(t, p.addr, "seam", 2, numbered(0, 500))
	waitMetric(t, p, 1, "sediment_table_commits_total", `table="seam"`)
	produceValues(t, p.addr, "seam", 2, numbered(500, 1000))
	if err := p.wait(); err == nil || !strings.Contains(p.logs.String(), "SEDIMENT_TEST_CRASH_BEFORE_TABLE_COMMIT") {
		t.Fatalf("the broker did not crash at the seam: %v\n%s", err, p.logs.String())
	}
	referenced := tableDataFiles(t, openCatalog(t, dir, storeURL), "seam")
	if before := parquet(); before <= len(referenced) {
		t.Fatalf("%d Parquet files, %d referenced: the crash left no orphan", before, len(referenced))
	}
	p = startProc(t, dir, p.addr, nil, append(flags, "--table-orphan-grace", "1ms")...)
	waitMetric(t, p, 1, "sediment_table_orphan_files_deleted_total", `table="seam"`)
	checkTableMatchesTopic(t, p, "seam", storeURL)
	if after, got := parquet(), tableDataFiles(t, openCatalog(t, dir, storeURL), "seam"); after != len(got) {
		t.Fatalf("%d Parquet files in the warehouse, %d referenced by the table", after, len(got))
	}
}

func numbered(from, to int) []string {
	var out []string
	for n := from; n < to; n++ {
		out = append(out, fmt.Sprintf(`{"n":%d,"pad":"%s"}`, n, base64.StdEncoding.EncodeToString([]byte{byte(n)})))
	}
	return out
}

// parquetFiles lists the Parquet files in the local warehouse.
func parquetFiles(t *testing.T, dataDir string) []string {
	t.Helper()
	var out []string
	root := filepath.Join(dataDir, "objects", "tables")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".parquet") {
			out = append(out, path)
		}
		return err
	})
	if err != nil {
		t.Fatalf("walk %s: %v", root, err)
	}
	return out
}
