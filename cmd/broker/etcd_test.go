package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
		"--object-store", "file://" + bucket}
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
