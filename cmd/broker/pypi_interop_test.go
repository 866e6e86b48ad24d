//go:build interop

package main

// The newest confluent-kafka and aiokafka from PyPI against Sediment, run
// from the venv `make python-interop` makes (.bin/pyvenv, the versions in
// interop/python/requirements.txt) with the scripts beside that file. The
// Debian-packaged clients have their own tests (interop_test.go).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

var pypiCodecs = []struct {
	name string
	attr uint8 // the batch attributes' compression bits Sediment stores
}{{"none", 0}, {"gzip", 1}, {"snappy", 2}, {"lz4", 3}, {"zstd", 4}}

// TestInteropPyPIConfluentCodecs: confluent-kafka's idempotent producer
// with every codec, read back byte for byte by its consumer and by
// franz-go, which also checks the batches are stored with that codec.
func TestInteropPyPIConfluentCodecs(t *testing.T) {
	testPyPICodecs(t, "confluent_roundtrip.py")
}

// TestInteropPyPIAiokafkaCodecs: aiokafka's async idempotent producer with
// every codec, read back byte for byte by its async consumer and by
// franz-go.
func TestInteropPyPIAiokafkaCodecs(t *testing.T) {
	testPyPICodecs(t, "aiokafka_roundtrip.py")
}

func testPyPICodecs(t *testing.T, script string) {
	py := pypiVenv(t)
	tb := startTestBroker(t, "")
	for _, codec := range pypiCodecs {
		t.Run(codec.name, func(t *testing.T) {
			const n = 300
			topic := fmt.Sprintf("%s-%s", script[:len(script)-3], codec.name)
			createTopics(t, tb.addr, topic, 3)
			got := py.run(t, script, tb.addr, topic, codec.name, strconv.Itoa(n))
			checkPyPIRecords(t, got, 0, n)
			checkStoredCodec(t, tb.addr, topic, codec.attr, n)
		})
	}
}

// TestInteropPyPIConsumerGroup: each client as a consumer group member
// reads a topic from the beginning and commits; the group's committed
// offsets are the topic's end; after more records, the next member reads
// exactly those, from where the group left off.
func TestInteropPyPIConsumerGroup(t *testing.T) {
	py := pypiVenv(t)
	tb := startTestBroker(t, "")
	for _, script := range []string{"confluent_group.py", "aiokafka_group.py"} {
		t.Run(script, func(t *testing.T) {
			topic, group := "group-"+script[:len(script)-3], "g-"+script[:len(script)-3]
			createTopics(t, tb.addr, topic, 3)
			produceGenerated(t, tb.addr, topic, 0, 200)
			checkPyPIRecords(t, py.run(t, script, tb.addr, topic, group, "200"), 0, 200)
			checkCommittedAtEnd(t, tb.addr, group, topic)
			produceGenerated(t, tb.addr, topic, 200, 150)
			checkPyPIRecords(t, py.run(t, script, tb.addr, topic, group, "150"), 200, 150)
			checkCommittedAtEnd(t, tb.addr, group, topic)
		})
	}
}

// pypiPython is the venv's interpreter and the scripts' directory.
type pypiPython struct{ python, scripts string }

// pypiVenv finds the venv of `make python-interop` from the working
// directory upward and checks it holds the pinned requirements.
func pypiVenv(t *testing.T) pypiPython {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		reqs := filepath.Join(dir, "interop", "python", "requirements.txt")
		if want, err := os.ReadFile(reqs); err == nil {
			venv := filepath.Join(dir, ".bin", "pyvenv")
			have, err := os.ReadFile(filepath.Join(venv, "requirements.txt"))
			if err != nil || !bytes.Equal(have, want) {
				t.Fatalf("%s does not hold interop/python/requirements.txt: run `make python-interop` (it needs `apt-get install -y python3-venv`)", venv)
			}
			return pypiPython{python: filepath.Join(venv, "bin", "python"), scripts: filepath.Dir(reqs)}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("interop/python/requirements.txt not found above the working directory")
		}
		dir = parent
	}
}

// pypiRecord is one record a script consumed (records.encode).
type pypiRecord struct {
	Partition int32        `json:"partition"`
	Offset    int64        `json:"offset"`
	Key       []byte       `json:"key"`
	Value     []byte       `json:"value"`
	Headers   []pypiHeader `json:"headers"`
}

type pypiHeader struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
}

// run runs script and returns the records it reports; a script that
// reports an error fails the test.
func (py pypiPython) run(t *testing.T, script string, args ...string) []pypiRecord {
	t.Helper()
	out := runCmd(t, "", py.python, py.argv(script, args...)...)
	return parsePyPIResult(t, script, out)
}

// argv is the interpreter's arguments that run script with args; -B: no
// __pycache__ in the source tree.
func (py pypiPython) argv(script string, args ...string) []string {
	return append([]string{"-B", filepath.Join(py.scripts, script)}, args...)
}

// parsePyPIResult reads the result line of records.report.
func parsePyPIResult(t *testing.T, script, out string) []pypiRecord {
	t.Helper()
	var res struct {
		Records []pypiRecord `json:"records"`
		Error   string       `json:"error"`
	}
	if err := json.Unmarshal([]byte(lastLine(out)), &res); err != nil {
		t.Fatalf("%s printed no result: %v\n%s", script, err, out)
	}
	if res.Error != "" {
		t.Fatalf("%s: %s (after %d records)", script, res.Error, len(res.Records))
	}
	return res.Records
}

// The records of interop/python/records.py, made the same way here.
func pypiKey(i int) []byte { return []byte(fmt.Sprintf("key-%d", i)) }

func pypiValue(i int) []byte {
	size := 100 + (i*97)%3000
	v := []byte(fmt.Sprintf("rec-%06d|", i))
	for j := 0; j < size; j++ {
		v = append(v, byte((i+j/16)%256))
	}
	return v
}

func pypiHeaders(i int) []kgo.RecordHeader {
	return []kgo.RecordHeader{
		{Key: "i", Value: []byte(strconv.Itoa(i))},
		{Key: "bin", Value: []byte{0, 255, byte(i % 256)}},
	}
}

// checkPyPIRecords checks got holds records from..from+n-1, each once and
// byte for byte, at distinct offsets.
func checkPyPIRecords(t *testing.T, got []pypiRecord, from, n int) {
	t.Helper()
	seen := map[string]bool{}
	at := map[[2]int64]bool{}
	for _, r := range got {
		i, err := strconv.Atoi(string(bytes.TrimPrefix(r.Key, []byte("key-"))))
		if err != nil || i < from || i >= from+n || seen[string(r.Key)] {
			t.Fatalf("unexpected or repeated record %q at %d/%d (want keys %d..%d once each)", r.Key, r.Partition, r.Offset, from, from+n-1)
		}
		seen[string(r.Key)] = true
		if pos := [2]int64{int64(r.Partition), r.Offset}; at[pos] {
			t.Fatalf("two records at partition %d offset %d", r.Partition, r.Offset)
		} else {
			at[pos] = true
		}
		if !bytes.Equal(r.Value, pypiValue(i)) {
			t.Fatalf("record %d: value differs (%d bytes, want %d)", i, len(r.Value), len(pypiValue(i)))
		}
		want := pypiHeaders(i)
		if len(r.Headers) != len(want) {
			t.Fatalf("record %d: %d headers, want %d", i, len(r.Headers), len(want))
		}
		for h := range want {
			if r.Headers[h].Key != want[h].Key || !bytes.Equal(r.Headers[h].Value, want[h].Value) {
				t.Fatalf("record %d: header %d is %q=%x, want %q=%x", i, h, r.Headers[h].Key, r.Headers[h].Value, want[h].Key, want[h].Value)
			}
		}
	}
	if len(got) != n {
		t.Fatalf("read %d records, want %d", len(got), n)
	}
}

// checkStoredCodec reads topic with franz-go: n records, byte for byte,
// every one from a batch compressed with the codec the client was given.
func checkStoredCodec(t *testing.T, addr, topic string, codec uint8, n int) {
	t.Helper()
	ctx, _ := ctxFor(t, time.Minute)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []pypiRecord
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatalf("read %s back with franz-go after %d records: %v", topic, len(got), err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if c := r.Attrs.CompressionType(); c != codec {
				t.Fatalf("record %q at %d/%d is in a batch with codec %d, want %d", r.Key, r.Partition, r.Offset, c, codec)
			}
			rec := pypiRecord{Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value}
			for _, h := range r.Headers {
				rec.Headers = append(rec.Headers, pypiHeader{h.Key, h.Value})
			}
			got = append(got, rec)
		})
	}
	checkPyPIRecords(t, got, 0, n)
}

// produceGenerated writes records from..from+n-1 of records.py with
// franz-go.
func produceGenerated(t *testing.T, addr, topic string, from, n int) {
	t.Helper()
	ctx, _ := ctxFor(t, time.Minute)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, n)
	for k := range recs {
		i := from + k
		recs[k] = &kgo.Record{Key: pypiKey(i), Value: pypiValue(i), Headers: pypiHeaders(i)}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", topic, err)
	}
}
