package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestWALRepair corrupts the WAL in the middle (not a torn tail: a later
// segment follows) after a SIGKILL. The broker must refuse to start with a
// message naming the file, the offset and --wal-repair; started with
// SEDIMENT_WAL_REPAIR (the flag through the environment), it must log what
// it dropped (file, offset, partitions and offset ranges) and serve every
// record before the damage, and nothing else.
func TestWALRepair(t *testing.T) {
	dir := t.TempDir()
	// Nothing is uploaded, so the WAL holds every record.
	flags := []string{"--upload-interval", "1h", "--upload-bytes", strconv.Itoa(1 << 30), "--wal-segment-bytes", strconv.Itoa(1 << 20)}
	p := startProc(t, dir, "", nil, flags...)
	createTopics(t, p.addr, "repair", 2)
	produced := produceForRepair(t, p.addr, "repair", 3000)
	p.kill()

	seg, off := damageWAL(t, dir)
	out, err := runBroker(t, dir, nil, flags...)
	if err == nil || !strings.Contains(out, seg) || !strings.Contains(out, fmt.Sprintf("offset %d", off)) ||
		!strings.Contains(out, "--wal-repair") {
		t.Fatalf("start on a corrupt WAL: err %v, want a refusal naming %s, offset %d and --wal-repair:\n%s", err, seg, off, out)
	}

	p = startProc(t, dir, "", []string{"SEDIMENT_WAL_REPAIR=true"}, flags...)
	logs := p.logs.String()
	if !strings.Contains(logs, "REPAIR: cutting the log") || !strings.Contains(logs, seg) ||
		!strings.Contains(logs, fmt.Sprintf("offset=%d", off)) || !strings.Contains(logs, "WAL REPAIR dropped acknowledged records") {
		t.Fatalf("repair not logged with file, offset and what was dropped:\n%s", logs)
	}
	got := readTopic(t, p.addr, "repair")
	for part, recs := range got {
		want := produced[part]
		if len(recs) == 0 || len(recs) >= len(want) {
			t.Fatalf("partition %d serves %d of %d records: want a non-empty prefix cut by the repair", part, len(recs), len(want))
		}
		for i, r := range recs {
			if string(r.Value) != want[i] || r.Offset != int64(i) {
				t.Fatalf("partition %d record %d is %q at offset %d, want %q", part, i, r.Value, r.Offset, want[i])
			}
		}
		lost := fmt.Sprintf("repair/%d offsets %d..%d", part, len(recs), len(want)-1)
		if !strings.Contains(logs, lost) {
			t.Fatalf("log does not name the range lost, %q:\n%s", lost, logs)
		}
	}
}

// produceForRepair produces n records round-robin over the topic's partitions,
// synchronously in small batches, and returns the values acknowledged per
// partition, in offset order.
func produceForRepair(t *testing.T, addr, topic string, n int) map[int32][]string {
	t.Helper()
	ctx, cancel := ctxFor(t, 120*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	out := map[int32][]string{}
	for i := 0; i < n; i += 50 {
		var recs []*kgo.Record
		for j := i; j < i+50 && j < n; j++ {
			recs = append(recs, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf("repair-%06d-%0900d", j, j))})
		}
		res := cl.ProduceSync(ctx, recs...)
		if err := res.FirstErr(); err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			out[r.Record.Partition] = append(out[r.Record.Partition], string(r.Record.Value))
		}
	}
	for _, vals := range out {
		sort.Strings(vals) // values sort in produce order, as offsets do
	}
	return out
}

// damageWAL flips 64 bytes in the middle of the first of several WAL
// segments and returns its path and the offset of the frame hit.
func damageWAL(t *testing.T, dir string) (string, int64) {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dir, "wal", "*.wal"))
	if err != nil || len(segs) < 2 {
		t.Fatalf("want at least 2 WAL segments, got %v (%v)", segs, err)
	}
	sort.Strings(segs)
	b, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	frame := int64(16) // find the frame holding the middle byte
	for mid := int64(len(b) / 2); ; {
		next := frame + 9 + int64(uint32(b[frame])<<24|uint32(b[frame+1])<<16|uint32(b[frame+2])<<8|uint32(b[frame+3]))
		if next > mid {
			break
		}
		frame = next
	}
	for i := frame + 100; i < frame+164; i++ {
		b[i] ^= 0xff
	}
	if err := os.WriteFile(segs[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	return segs[0], frame
}

// runBroker runs the broker on dir until it exits (it is expected to fail
// at start-up) and returns its output.
func runBroker(t *testing.T, dir string, env []string, flags ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append([]string{"serve", "--listen", fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"--http-listen", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "--data-dir", dir}, flags...)
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "SEDIMENT_TEST_BROKER=1"), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
