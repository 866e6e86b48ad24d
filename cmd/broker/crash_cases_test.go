package main

// The cases of TestCrashDuringIdempotentProduce, the object stores they run
// on, and the checks of what each crash leaves behind. Each check looks for
// something only its crash produces (a value no clean start logs, or state
// in the metadata and the bucket), never for a line every start prints.

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/internal/testwait"
	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/miniotest"
	"github.com/sediment-io/sediment/storage/objectstore/storeurl"
)

// uploadObjects is the key prefix of the objects the uploader writes
// (partition's uploadPrefix).
const uploadObjects = "data/"

// crashBackend is an object store the crash cases run on.
type crashBackend struct {
	name string
	// bucket returns the broker's --object-store flags for a fresh bucket
	// (none: the local default under dataDir), the environment the broker
	// needs to reach it, and its URL for the test's own look-ups.
	bucket func(t *testing.T, dataDir string) (flags, env []string, url string)
	// sigkillOnly runs only the plain SIGKILL case: the backend is a second
	// client library for a server the other cases already cover.
	sigkillOnly bool
}

func crashBackends() []crashBackend {
	local := func(_ *testing.T, dir string) ([]string, []string, string) {
		return nil, nil, "file://" + filepath.Join(dir, "objects")
	}
	minio := func(scheme string) func(*testing.T, string) ([]string, []string, string) {
		return func(t *testing.T, _ string) ([]string, []string, string) {
			srv := miniotest.Shared(t)
			flags, _ := minioStore(t, srv, scheme, "crash")
			return flags, srv.Env(), flags[len(flags)-1]
		}
	}
	return []crashBackend{
		{name: "local", bucket: local},
		{name: "minio s3", bucket: minio("s3")},
		{name: "minio minio-go", bucket: minio("minio"), sigkillOnly: true},
	}
}

// crashCase is one way to bring the broker down.
type crashCase struct {
	name       string
	env        []string // for the first run; a crash seam picks its own moment
	firstFlags []string // for the first run, after flags
	flags      []string // for both runs
	// crash brings the first broker p down and notes in r what check needs.
	crash func(t *testing.T, p *brokerProc, r *crashRun)
	// check runs once every acknowledged record was read back.
	check func(t *testing.T, r *crashRun)
}

// crashRun is what a case learnt about its crash and the restart.
type crashRun struct {
	dir       string                  // the broker's data dir
	store     string                  // the bucket's URL
	acked     map[string]bool         // values acknowledged before the crash
	committed map[int32]int64         // each partition's committed end, read after the crash
	restarted *brokerProc             // the broker after the crash
	startLogs string                  // its lines up to "log recovered"
	parts     map[int32][]*kgo.Record // what was read back after the restart
	tornFile  string                  // the WAL segment torn after the crash
	tornSize  int64                   // its size before the tear
	junk      int                     // how many bytes were appended to it
	orphan    string                  // the object the crash seam left uncommitted
}

func crashCases() []crashCase {
	tear := func(junk []byte) func(*testing.T, *brokerProc, *crashRun) {
		return func(t *testing.T, p *brokerProc, r *crashRun) {
			p.kill()
			r.tornFile, r.tornSize = tearWALTail(t, p.dataDir, junk)
			r.junk = len(junk)
		}
	}
	killAndReadCommitted := func(t *testing.T, p *brokerProc, r *crashRun) {
		p.kill()
		r.committed = committedEnds(t, r.dir, "crash")
	}
	return []crashCase{
		// Uploads are held back in the first run, so every acknowledged
		// record is in the WAL only and the restart must replay it.
		{name: "sigkill", firstFlags: []string{"--upload-interval", "1h"},
			crash: killAndReadCommitted, check: checkReplayedUncommitted},
		{name: "torn WAL tail", crash: tear([]byte{0, 0, 0x40, 0, 0xde, 0xad, 0xbe, 0xef, 1, 'p', 'a', 'r', 't'}),
			check: checkTornTailCut},
		{name: "zeroed WAL tail", crash: tear(make([]byte, 4096)), check: checkTornTailCut},
		{name: "kill between object PUT and metadata commit", env: []string{"SEDIMENT_TEST_CRASH_AFTER_PUTS=8"},
			crash: waitForCrashSeam, check: checkOrphanKept},
		{name: "sigkill with --durability object", flags: []string{"--durability", "object"},
			crash: killAndReadCommitted, check: checkAckedWereCommitted},
	}
}

// checkReplayedUncommitted: nothing was committed before the crash, so the
// restart replayed the acknowledged records from the WAL.
func checkReplayedUncommitted(t *testing.T, r *crashRun) {
	for p, end := range r.committed {
		if end != 0 {
			t.Fatalf("partition %d was committed up to %d before the crash; want uploads held back", p, end)
		}
	}
	if n := logInt(t, r.startLogs, "WAL replayed", "batches_recovered"); n == 0 {
		t.Fatalf("the restart replayed no batch from the WAL, yet %d records were acknowledged and none committed:\n%s",
			len(r.acked), r.startLogs)
	}
}

// checkTornTailCut: the restart cut the torn segment back to at most its
// size before the tear, dropping the junk and nothing after it.
func checkTornTailCut(t *testing.T, r *crashRun) {
	line := logLine(t, r.startLogs, "torn tail")
	if file := logField(line, "file"); file != r.tornFile {
		t.Fatalf("torn tail cut in %q, want %q:\n%s", file, r.tornFile, line)
	}
	off, dropped := logFieldInt(t, line, "offset"), logFieldInt(t, line, "dropped_bytes")
	if off > r.tornSize || off+dropped != r.tornSize+int64(r.junk) {
		t.Fatalf("torn tail cut at %d dropping %d bytes; the segment held %d bytes and %d of junk:\n%s",
			off, dropped, r.tornSize, r.junk, line)
	}
}

// waitForCrashSeam waits for the broker to kill itself after an object PUT
// and finds the object it left behind: in the bucket, unknown to metadata.
func waitForCrashSeam(t *testing.T, p *brokerProc, r *crashRun) {
	if err := p.wait(); err == nil {
		t.Fatal("broker exited cleanly; the crash seam did not fire")
	}
	orphans := unknownObjects(t, r.dir, r.store)
	if len(orphans) != 1 {
		t.Fatalf("objects unknown to metadata after the crash: %v, want the one the crash seam left", orphans)
	}
	r.orphan = orphans[0]
}

// checkOrphanKept: the batches of the uncommitted object were replayed from
// the WAL and uploaded again; the orphan stays in the bucket (its grace
// period is an hour) and metadata never learns of it.
func checkOrphanKept(t *testing.T, r *crashRun) {
	if n := logInt(t, r.startLogs, "WAL replayed", "batches_recovered"); n == 0 {
		t.Fatalf("the restart replayed no batch, yet the object %s was never committed:\n%s", r.orphan, r.startLogs)
	}
	if err := r.restarted.terminate(); err != nil {
		t.Fatalf("graceful shutdown: %v", err)
	}
	orphans := unknownObjects(t, r.dir, r.store)
	if len(orphans) != 1 || orphans[0] != r.orphan {
		t.Fatalf("objects unknown to metadata after the restart: %v, want only the orphan %s", orphans, r.orphan)
	}
}

// checkAckedWereCommitted: with --durability object an acknowledgement
// waits for the metadata commit, so every record acknowledged before the
// crash lies below its partition's committed end, and nothing was left in
// the WAL to replay.
func checkAckedWereCommitted(t *testing.T, r *crashRun) {
	for p, recs := range r.parts {
		for _, rec := range recs {
			if r.acked[string(rec.Value)] && rec.Offset >= r.committed[p] {
				t.Fatalf("%s at %d/%d was acknowledged before the crash, but only [0, %d) was committed",
					rec.Value, p, rec.Offset, r.committed[p])
			}
		}
	}
	if n := logInt(t, r.startLogs, "WAL replayed", "batches_recovered"); n != 0 {
		t.Fatalf("the restart replayed %d batches from the WAL with --durability object", n)
	}
}

// openMeta opens the metadata of a broker that is not running.
func openMeta(t *testing.T, dataDir string) *metadata.Store {
	t.Helper()
	kv, err := metadata.OpenBolt(filepath.Join(dataDir, "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	return metadata.NewStore(kv)
}

// committedEnds returns, for each partition of topic, the end of what the
// stopped broker on dataDir committed to the object store.
func committedEnds(t *testing.T, dataDir, topic string) map[int32]int64 {
	t.Helper()
	ctx := testCtx(t, 30*time.Second)
	meta := openMeta(t, dataDir)
	defer meta.Close()
	tp, ok, err := meta.Topic(ctx, topic)
	if err != nil || !ok {
		t.Fatalf("topic %s in metadata: ok=%v err=%v", topic, ok, err)
	}
	ends := map[int32]int64{}
	for p := range tp.Partitions {
		st, _, err := meta.PartitionState(ctx, tp.ID, p)
		if err != nil {
			t.Fatal(err)
		}
		ends[p] = st.NextOffset
	}
	return ends
}

// unknownObjects returns the upload objects in the bucket at url that the
// metadata of the stopped broker on dataDir does not know.
func unknownObjects(t *testing.T, dataDir, url string) []string {
	t.Helper()
	ctx := testCtx(t, 30*time.Second)
	store, err := storeurl.Open(ctx, url, storeurl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	meta := openMeta(t, dataDir)
	defer meta.Close()
	var keys []string
	if err := store.List(ctx, uploadObjects, "", func(info objectstore.Info) bool {
		keys = append(keys, info.Key)
		return true
	}); err != nil {
		t.Fatalf("list %s: %v", url, err)
	}
	var unknown []string
	for _, key := range keys {
		known, err := meta.ObjectKnown(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if !known {
			unknown = append(unknown, key)
		}
	}
	return unknown
}

// startLogs returns what p logged up to the end of its log recovery.
func startLogs(t *testing.T, p *brokerProc) string {
	t.Helper()
	// A deadline, not a count of polls: recovery of a large WAL on a
	// loaded machine takes what it takes.
	var logs string
	testwait.Until(t, 2*time.Minute, func() bool {
		logs = p.logs.String()
		return strings.Contains(logs, `msg="log recovered"`)
	}, "no \"log recovered\" line from the restarted broker within 2m:\n%v", testwait.Later(func() string { return logs }))
	return logs
}

// logLine returns the line of logs that contains what.
func logLine(t *testing.T, logs, what string) string {
	t.Helper()
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, what) {
			return line
		}
	}
	t.Fatalf("no line with %q in:\n%s", what, logs)
	return ""
}

// logFieldRE matches one key=value of a slog text line; the value may be
// quoted.
var logFieldRE = regexp.MustCompile(`(?:^| )([\w.]+)=("(?:[^"\\]|\\.)*"|\S*)`)

// logField returns the value of key in a slog text line, "" when absent.
func logField(line, key string) string {
	for _, m := range logFieldRE.FindAllStringSubmatch(line, -1) {
		if m[1] != key {
			continue
		}
		if v, err := strconv.Unquote(m[2]); err == nil {
			return v
		}
		return m[2]
	}
	return ""
}

func logFieldInt(t *testing.T, line, key string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(logField(line, key), 10, 64)
	if err != nil {
		t.Fatalf("field %s of %q: %v", key, line, err)
	}
	return n
}

// logInt returns the integer field key of the line of logs that contains
// what.
func logInt(t *testing.T, logs, what, key string) int64 {
	t.Helper()
	return logFieldInt(t, logLine(t, logs, what), key)
}
