package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

// TestEtcdMetadataRestart: a broker with --metadata etcd:// keeps its
// metadata in etcd only (no meta.db in its data directory). Records
// produced with franz-go are all read back after a restart on the same
// etcd and data directory, and, in object durability, by a broker on a
// fresh data directory that shares only etcd and the bucket.
func TestEtcdMetadataRestart(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	bucket := t.TempDir()
	flags := []string{"--metadata", "etcd://" + endpoint + "/sediment-test", "--durability", "object",
		"--object-store", "file://" + bucket, "--shared-local-store"}
	dir := t.TempDir()
	tb := startTestBroker(t, dir, flags...)
	createTopics(t, tb.addr, "events", 3)
	const n = 300
	produceLabeled(t, tb.addr, "events", "etcd", n, 3)
	tb.stop()
	if _, err := os.Stat(filepath.Join(dir, "meta.db")); !os.IsNotExist(err) {
		t.Fatalf("meta.db in the data directory of an etcd broker: %v", err)
	}

	for _, restartDir := range []string{dir, t.TempDir()} {
		tb = startTestBroker(t, restartDir, flags...)
		checkAllRead(t, readTopic(t, tb.addr, "events"), "etcd", n)
		tb.stop()
	}
}

// TestEtcdManyPartitions: in object durability on etcd, a produce to 100
// partitions at once is acknowledged and read back whole: each upload
// spreads the partitions over objects whose commits fit etcd's limit of
// operations per transaction (one object for all 100 would not).
func TestEtcdManyPartitions(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	tb := startTestBroker(t, t.TempDir(), "--metadata", "etcd://"+endpoint+"/many", "--durability", "object",
		"--object-store", "file://"+t.TempDir(), "--shared-local-store")
	createTopics(t, tb.addr, "wide", 100)
	const n = 1000
	produceLabeled(t, tb.addr, "wide", "wide", n, 100)
	checkAllRead(t, readTopic(t, tb.addr, "wide"), "wide", n)
}

// checkAllRead asserts parts hold produceLabeled's n values of prefix, each
// once, at contiguous offsets from 0.
func checkAllRead(t *testing.T, parts map[int32][]*kgo.Record, prefix string, n int) {
	t.Helper()
	seen := map[string]bool{}
	for p, recs := range parts {
		for i, r := range recs {
			if r.Offset != int64(i) {
				t.Fatalf("partition %d: record %d at offset %d", p, i, r.Offset)
			}
			if seen[string(r.Value)] || !strings.HasPrefix(string(r.Value), prefix+"-") {
				t.Fatalf("partition %d: unexpected or repeated record %q", p, r.Value)
			}
			seen[string(r.Value)] = true
		}
	}
	for i := range n {
		if v := fmt.Sprintf("%s-%d", prefix, i); !seen[v] {
			t.Fatalf("record %q never read (read %d of %d)", v, len(seen), n)
		}
	}
}

// TestEtcdMetadataBadURL: a bad etcd URL is refused at start-up with a
// message that names the flag.
func TestEtcdMetadataBadURL(t *testing.T) {
	for _, url := range []string{"etcd", "etcd://127.0.0.1/x", "etcd://127.0.0.1:2379", "etcd://127.0.0.1:2379/x?token=y"} {
		_, err := parseServe([]string{"--metadata", url}, func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), "--metadata") {
			t.Errorf("--metadata %s: err=%v, want one naming the flag", url, err)
		}
	}
}

// TestEtcdUnreachableAtStart: a broker whose etcd does not answer keeps
// retrying with a log line that says so, without crashing, until its
// start-up context ends.
func TestEtcdUnreachableAtStart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	cfg, err := parseServe([]string{"--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--metadata", "etcd://" + addr + "/p", "--shared-local-store"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	logger := slog.New(slog.NewTextHandler(lineWriter(lines), nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		b, err := startBroker(ctx, cfg, logger)
		if b != nil {
			b.close()
		}
		done <- err
	}()
	wait := testCtx(t, 60*time.Second)
	for retried := false; !retried; {
		select {
		case l := <-lines:
			retried = strings.Contains(l, "etcd unreachable, retrying")
		case err := <-done:
			t.Fatalf("start-up ended before a retry: %v", err)
		case <-wait.Done():
			t.Fatal("no retry logged")
		}
	}
	cancel()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "--metadata") || !strings.Contains(err.Error(), "unreachable") {
			t.Fatalf("start-up error %v, want one naming --metadata and the unreachable etcd", err)
		}
	case <-wait.Done():
		t.Fatal("start-up did not end with its context")
	}
}

// lineWriter sends each write (one log line) to a channel, dropping lines
// nobody reads.
type lineWriter chan string

func (w lineWriter) Write(p []byte) (int, error) {
	select {
	case w <- string(p):
	default:
	}
	return len(p), nil
}
