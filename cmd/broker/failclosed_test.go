package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/sediment-io/sediment/storage/wal"
)

// walSyncFaultEnv injects a failing disk into a broker subprocess of this
// test binary: its value is the path of a trigger file, and once that file
// exists every WAL fsync fails with EIO. Only this test binary reads it,
// and only with SEDIMENT_TEST_BROKER=1 (see TestMain): the shipped binary
// has no such seam (see testWALFS).
const walSyncFaultEnv = "SEDIMENT_TEST_WAL_SYNC_FAULT"

func init() {
	if os.Getenv("SEDIMENT_TEST_BROKER") != "1" {
		return
	}
	if trigger := os.Getenv(walSyncFaultEnv); trigger != "" {
		testWALFS = &syncFaultFS{trigger: trigger}
	}
}

// syncFaultFS is the real filesystem whose fsyncs fail with EIO once the
// trigger file exists. A file whose fsync fails also loses what was written
// since its last good fsync, as when the kernel drops dirty pages after a
// failed writeback: whatever the broker acknowledged without a good fsync
// would then be missing after the restart.
type syncFaultFS struct {
	wal.OSFS
	trigger string
}

func (fs *syncFaultFS) failing() bool {
	_, err := os.Stat(fs.trigger)
	return err == nil
}

func (fs *syncFaultFS) Create(name string) (wal.File, error) {
	f, err := fs.OSFS.Create(name)
	if err != nil {
		return nil, err
	}
	return &syncFaultFile{File: f, fs: fs, name: name}, nil
}

func (fs *syncFaultFS) OpenFile(name string) (wal.File, error) {
	f, err := fs.OSFS.OpenFile(name)
	if err != nil {
		return nil, err
	}
	size, err := f.Size()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &syncFaultFile{File: f, fs: fs, name: name, synced: size}, nil
}

func (fs *syncFaultFS) SyncDir(dir string) error {
	if fs.failing() {
		return &os.PathError{Op: "fsync", Path: dir, Err: syscall.EIO}
	}
	return fs.OSFS.SyncDir(dir)
}

// syncFaultFile is a WAL file of a syncFaultFS. Only one goroutine at a
// time syncs a WAL file (recovery, then the flusher), so synced needs no
// lock.
type syncFaultFile struct {
	wal.File
	fs     *syncFaultFS
	name   string
	synced int64 // size at the last good fsync
}

func (f *syncFaultFile) Sync() error {
	if f.fs.failing() {
		if err := f.File.Truncate(f.synced); err != nil {
			return err
		}
		return &os.PathError{Op: "fdatasync", Path: f.name, Err: syscall.EIO}
	}
	if err := f.File.Sync(); err != nil {
		return err
	}
	size, err := f.File.Size()
	f.synced = size
	return err
}

// TestFailedFsyncFailsClosed runs a broker whose WAL fsync starts failing:
// it refuses produce with KAFKA_STORAGE_ERROR and never acknowledges what
// it could not sync, answers /readyz with 503 and the reason, shows
// sediment_storage_failed 1, says why in one log line and exits non-zero
// by itself. Restarted on the same directory without the fault, it serves
// every record acknowledged before the fault, all from WAL recovery (no
// upload ran), and nothing that was never produced.
func TestFailedFsyncFailsClosed(t *testing.T) {
	dir := t.TempDir()
	trigger := filepath.Join(t.TempDir(), "fail-wal-fsync")
	flags := []string{"--upload-interval", "1h", "--storage-failed-exit-delay", "20s"}
	p := startProc(t, dir, "", []string{walSyncFaultEnv + "=" + trigger}, flags...)
	createTopics(t, p.addr, "fsync", 2)
	produced := map[string]bool{}
	acked := produceAcked(t, p.addr, "fsync", 300, produced)
	if got := p.metric("sediment_storage_failed"); got != 0 {
		t.Fatalf("sediment_storage_failed = %v on a healthy broker", got)
	}

	if err := os.WriteFile(trigger, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // the first waits for the fsync that fails; the second comes after it
		v := fmt.Sprintf("refused-%d", i)
		produced[v] = true
		if code := produceRaw(t, p.addr, "fsync", v); code != kerr.KafkaStorageError.Code {
			t.Fatalf("produce %s after the fsync failed: error code %d, want KAFKA_STORAGE_ERROR", v, code)
		}
		if i == 0 {
			checkFailedState(t, p)
		}
	}

	err := p.wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("broker exited with %v after its storage failed, want a non-zero exit", err)
	}
	checkOneErrorLine(t, p.logs.String())

	p2 := startProc(t, dir, "", nil, flags...)
	parts := readTopic(t, p2.addr, "fsync")
	checkServed(t, parts, acked, produced)
}

// produceAcked produces n records with a plain franz-go producer, each
// acknowledged, and returns their values.
func produceAcked(t *testing.T, addr, topic string, n int, produced map[string]bool) map[string]bool {
	t.Helper()
	ctx, _ := ctxFor(t, 60*time.Second)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	acked := map[string]bool{}
	for i := 0; i < n; i += 50 {
		var recs []*kgo.Record
		for j := i; j < min(i+50, n); j++ {
			v := fmt.Sprintf("acked-%04d", j)
			produced[v] = true
			recs = append(recs, &kgo.Record{Value: []byte(v)})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("produce before the fault: %v", err)
		}
		for _, r := range recs {
			acked[string(r.Value)] = true
		}
	}
	return acked
}

// produceRaw sends one Produce (acks=all) of one record to partition 0,
// without any client retry, and returns the partition's error code.
func produceRaw(t *testing.T, addr, topic, value string) int16 {
	t.Helper()
	ctx, _ := ctxFor(t, 60*time.Second)
	// Produce v9, by topic name: v13 names topics by id.
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.MaxVersions(kversion.V3_0_0()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 30000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = recordBatch(nil, []byte(value))
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("produce %s: %v", value, err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("produce %s: malformed response %+v", value, resp)
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

// checkFailedState checks what a failed broker shows before it exits:
// /readyz 503 naming the failed fsync, and the gauge at 1.
func checkFailedState(t *testing.T, p *brokerProc) {
	t.Helper()
	resp, err := http.Get("http://" + p.http + "/readyz")
	if err != nil {
		t.Fatalf("/readyz of the failed broker: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "fdatasync") {
		t.Fatalf("/readyz after the fsync failed: %d %q, want 503 with the reason", resp.StatusCode, body)
	}
	if got := p.metric("sediment_storage_failed"); got != 1 {
		t.Fatalf("sediment_storage_failed = %v after the fsync failed, want 1", got)
	}
}

// checkOneErrorLine checks that the broker said why it failed in one log
// line, and in no other: no error per refused produce or retried upload.
func checkOneErrorLine(t *testing.T, logs string) {
	t.Helper()
	var errLines []string
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "level=ERROR") {
			errLines = append(errLines, line)
		}
	}
	if len(errLines) != 1 || !strings.Contains(errLines[0], "storage failed") || !strings.Contains(errLines[0], "fdatasync") {
		t.Fatalf("want one error line saying the storage failed and why, got %d:\n%s", len(errLines), logs)
	}
}

// checkServed checks that every acknowledged value is served exactly once
// and that every served value was produced.
func checkServed(t *testing.T, parts map[int32][]*kgo.Record, acked, produced map[string]bool) {
	t.Helper()
	seen := map[string]int{}
	for _, recs := range parts {
		for _, r := range recs {
			v := string(r.Value)
			if !produced[v] {
				t.Fatalf("served %q, which was never produced", v)
			}
			seen[v]++
		}
	}
	for v := range acked {
		if seen[v] != 1 {
			t.Fatalf("acknowledged record %s served %d times after the restart, want once", v, seen[v])
		}
	}
	t.Logf("%d acknowledged records served; %d served in all", len(acked), len(seen))
}
