package protocol

import (
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/partition"
)

// fuzzTopicID is the fixed id of the topic "fuzz" that the seeds name, so
// that requests naming topics by id reach a real topic.
var fuzzTopicID = metadata.TopicID{0xf0, 0x22, 0x70, 0x91, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 1}

// fuzzBroker is a Server over a real log, driven without a listener: each
// input goes through the connection's decode and dispatch (handleFrame),
// the handler's wait, and the response encoder.
type fuzzBroker struct {
	root     string
	srv      *Server
	log      *partition.Log
	closeLog func() error
	opened   int
}

func newFuzzBroker(tb testing.TB) *fuzzBroker {
	fb := &fuzzBroker{root: tb.TempDir()}
	if err := fb.open(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { fb.close() })
	return fb
}

// open starts a fresh log holding topic "fuzz" (2 partitions, some data).
func (fb *fuzzBroker) open() error {
	fb.opened++
	s := &brokerSetup{dir: filepath.Join(fb.root, fmt.Sprint(fb.opened)),
		topics: []metadata.Topic{{Name: "fuzz", ID: fuzzTopicID, Partitions: 2}}}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return err
	}
	log, meta, closeLog, err := openLog(s)
	if err != nil {
		return err
	}
	cfg := Config{AdvertiseHost: "127.0.0.1", AdvertisePort: 9092, ClusterID: "fuzz", Logger: testLogger()}
	if cfg, err = withServices(cfg, log, meta); err != nil {
		closeLog()
		return err
	}
	fb.srv, fb.log, fb.closeLog = NewServer(cfg, log, meta), log, closeLog
	t, _ := log.Topic("fuzz")
	for i := range 3 {
		res, err := log.Append(context.Background(), t.Partition(0), fuzzBatch(int64(i)))
		if err == nil {
			err = log.Wait(context.Background(), res)
		}
		if err != nil {
			return fmt.Errorf("seed data: %w", err)
		}
	}
	return nil
}

func (fb *fuzzBroker) close() {
	fb.srv.Close()
	fb.srv.cfg.Txns.Close()
	fb.closeLog()
	os.RemoveAll(filepath.Join(fb.root, fmt.Sprint(fb.opened)))
}

// maybeReset starts over when inputs have drifted the log far from the
// seeds' world (the seed topic deleted, or many or huge topics created),
// which would only slow the fuzzer down.
func (fb *fuzzBroker) maybeReset(tb testing.TB) {
	topics := fb.log.Topics()
	parts := 0
	for _, t := range topics {
		parts += len(t.Partitions())
	}
	if _, ok := fb.log.Topic("fuzz"); ok && len(topics) <= 32 && parts <= 2048 {
		return
	}
	fb.close()
	if err := fb.open(); err != nil {
		tb.Fatal(err)
	}
}

// hangBound fails an input that neither finishes nor fails in this long.
const hangBound = 2 * time.Minute

// handle runs one frame as the connection would and checks the answer.
func (fb *fuzzBroker) handle(t *testing.T, frame []byte) {
	// go test -fuzz has no per-input time limit: a hang (here or in the
	// log's close on reset) must crash the worker so the input is kept.
	watchdog := time.AfterFunc(hangBound, func() { panic(fmt.Sprintf("request hung: %x", frame)) })
	defer watchdog.Stop()
	fb.maybeReset(t)
	ctx, cancel := context.WithCancel(fb.srv.ctx)
	defer cancel()
	c := &conn{s: fb.srv, remote: "fuzz", ctx: ctx, cancel: cancel}
	r, err := c.handleFrame(frame)
	if err != nil {
		return // the connection closes: a fine answer to a bad frame
	}
	if r.wait != nil {
		// The client goes away soon: long polls end early.
		leave := time.AfterFunc(5*time.Millisecond, cancel)
		r.wait()
		leave.Stop()
	}
	checkEncodedResponse(t, r, frameBytes(encodeResponse(nil, r)))
}

// frameBytes joins an answer from encodeResponse into one slice.
func frameBytes(enc []byte, frame net.Buffers) []byte {
	if frame == nil {
		return enc
	}
	return bytes.Join(frame, nil)
}

// checkEncodedResponse asserts that an encoded answer is framed right and
// decodes as the response it claims to be.
func checkEncodedResponse(t *testing.T, r *request, buf []byte) {
	t.Helper()
	if len(buf) < 8 || int(binary.BigEndian.Uint32(buf)) != len(buf)-4 {
		t.Fatalf("response frame of %d bytes announces %d", len(buf), binary.BigEndian.Uint32(buf))
	}
	if corr := int32(binary.BigEndian.Uint32(buf[4:])); corr != r.corrID {
		t.Fatalf("correlation id %d, request had %d", corr, r.corrID)
	}
	back := kmsg.ResponseForKey(r.resp.Key())
	back.SetVersion(r.resp.GetVersion())
	if err := decodeResponseBody(back, buf[8:]); err != nil {
		t.Fatalf("%s v%d answer does not decode: %v", kmsg.NameForKey(r.key), r.resp.GetVersion(), err)
	}
}

func FuzzDecodeRequest(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s.frame[4:])
	}
	fb := newFuzzBroker(f)
	f.Fuzz(func(t *testing.T, frame []byte) {
		fb.handle(t, frame)
	})
}

// fuzzBatch is a valid batch of two records with fixed timestamps.
func fuzzBatch(seq int64) []byte {
	s := plainBatch(2, 8, 1_700_000_000_000+seq)
	return s.build(nopTB{})
}

// nopTB lets the batch builder run outside a test; it never fails for
// the codecs the seeds use.
type nopTB struct{ testing.TB }

func (nopTB) Helper()                   {}
func (nopTB) Fatalf(string, ...any)     { panic("fuzz seed: cannot build batch") }
func (nopTB) Errorf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }

// fuzzSeed is one valid frame (with its size prefix) of a served API.
type fuzzSeed struct {
	name  string
	frame []byte
}

// fuzzSeeds returns a valid frame of every served API at several versions,
// plus requests the broker answers without a handler.
func fuzzSeeds(tb testing.TB) []fuzzSeed {
	var seeds []fuzzSeed
	fmtr := kmsg.NewRequestFormatter(kmsg.FormatterClientID("fuzz"))
	add := func(label string, req kmsg.Request, versions ...int16) {
		for _, v := range versions {
			req.SetVersion(v)
			name := fmt.Sprintf("%02d_%s_%s_v%d", req.Key(), strings.ToLower(kmsg.NameForKey(req.Key())), label, v)
			seeds = append(seeds, fuzzSeed{name, fmtr.AppendRequest(nil, req, int32(len(seeds)+1))})
		}
	}
	name, id := "fuzz", [16]byte(fuzzTopicID)

	produce := produceReq(3, -1, name, 0, fuzzBatch(10))
	produce.Topics[0].TopicID = id
	add("batch", produce, 3, 9, 13)
	idem := plainBatch(1, 4, 1_700_000_000_000)
	idem.producerID, idem.epoch, idem.seq = 1, 0, 0
	add("idempotent", produceReq(9, 1, name, 1, idem.build(tb)), 9)
	add("acks0", produceReq(7, 0, name, 0, fuzzBatch(11)), 7)

	fetch := fetchReq(4, name, id, 0, 0)
	fetch.MaxWaitMillis, fetch.MinBytes = 100, 1
	add("longpoll", fetch, 4, 11, 13, 18)
	add("latest_earliest", listOffsetsReq(1, name, []int64{-1, -2}), 1, 7, 11)
	add("by_time", listOffsetsReq(1, name, []int64{1_700_000_000_001}), 4)
	add("autocreate", metadataReq(0, true, name), 0, 4, 9)
	add("all", metadataReq(1, false), 1, 13)
	byID := metadataReq(12, false)
	byID.Topics = []kmsg.MetadataRequestTopic{{TopicID: id}}
	add("by_id", byID, 12)
	apiv := kmsg.NewPtrApiVersionsRequest()
	apiv.ClientSoftwareName, apiv.ClientSoftwareVersion = "fuzz", "1"
	add("plain", apiv, 0, 3, 5)
	add("configs", createTopicsReq(0, false, newTopicReq("fuzz-new", 2, 1, "retention.ms", "1000")), 0, 5)
	add("validate", createTopicsReq(0, true, newTopicReq("fuzz-dry", -1, -1)), 7)
	del := kmsg.NewPtrDeleteTopicsRequest()
	del.TopicNames = []string{"fuzz-new"}
	add("by_name", del, 0, 5)
	delID := kmsg.NewPtrDeleteTopicsRequest()
	delID.Topics = []kmsg.DeleteTopicsRequestTopic{{TopicID: [16]byte{1}}, {Topic: ptr("fuzz-new")}}
	add("by_id", delID, 6)
	add("idempotent", initProducerIDReq(0, nil), 0, 4)
	add("transactional", initProducerIDReq(0, ptr("txn")), 5)
	add("topic", describeConfigsReq(0, kmsg.ConfigResourceTypeTopic, name), 0, 1, 4)
	add("broker", describeConfigsReq(0, kmsg.ConfigResourceTypeBroker, "0", "num.partitions"), 3)
	add("topic", alterConfigsReq(0, false, kmsg.ConfigResourceTypeTopic, name, "retention.ms", "100000"), 0, 2)
	add("broker", alterConfigsReq(0, true, kmsg.ConfigResourceTypeBroker, "", "num.partitions", "2"), 1)
	add("validate", createPartitionsReq(0, true, name, 4), 0, 3)
	add("topic", incAlterReq(0, false, kmsg.ConfigResourceTypeTopic, name, set("max.message.bytes", "5000"),
		incOp{kmsg.IncrementalAlterConfigOpAppend, "cleanup.policy", ptr("compact")}), 0, 1)
	add("broker", incAlterReq(0, false, kmsg.ConfigResourceTypeBroker, "0", set("log.retention.ms", "100000")), 1)
	delRecs := kmsg.NewPtrDeleteRecordsRequest()
	delRecs.Topics = []kmsg.DeleteRecordsRequestTopic{{Topic: name, Partitions: []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: 1}}}}
	add("offset", delRecs, 0, 2)
	cluster := kmsg.NewPtrDescribeClusterRequest()
	cluster.EndpointType = 1
	add("brokers", cluster, 0, 1, 2)
	// The group APIs' seeds are in 11_join_group_test.go.
	addGroupSeeds(add, name, id)
	addTxnSeeds(add, name, id)
	add("below_range", fetchReq(3, name, id, 0, 0), 3) // closes: no top-level error at v3
	// ApiVersions at a version we do not know: answered at v0 (KIP-511).
	seeds = append(seeds, fuzzSeed{"18_apiversions_unknown_v9", rawHeader(18, 9, int32(len(seeds)+1), 0xfe, 0xfe)})
	add("current", epochReq(2, name, 0, 0, 0), 2, 3, 4)
	dtp := kmsg.NewPtrDescribeTopicPartitionsRequest()
	dtp.Topics, dtp.ResponsePartitionLimit = []kmsg.DescribeTopicPartitionsRequestTopic{{Topic: name}}, 1
	dtp.Cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: name, Partition: 1}
	add("cursor", dtp, 0)
	return seeds
}

var updateFuzzCorpus = flag.Bool("update-fuzz-corpus", false, "rewrite protocol/testdata/fuzz/FuzzDecodeRequest from fuzzSeeds")

const fuzzCorpusDir = "testdata/fuzz/FuzzDecodeRequest"

// corpusFile is a seed in the `go test fuzz v1` format.
func corpusFile(frame []byte) []byte {
	return fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", frame)
}

// TestFuzzSeedCorpus keeps the committed seed corpus in step with
// fuzzSeeds: every seed must be there, byte for byte. Regenerate with
// go test ./protocol -run TestFuzzSeedCorpus -args -update-fuzz-corpus.
func TestFuzzSeedCorpus(t *testing.T) {
	seeds := fuzzSeeds(t)
	served := map[int16]bool{}
	for _, s := range seeds {
		served[int16(binary.BigEndian.Uint16(s.frame[4:]))] = true
		path := filepath.Join(fuzzCorpusDir, s.name)
		want := corpusFile(s.frame[4:])
		if *updateFuzzCorpus {
			if err := os.MkdirAll(fuzzCorpusDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("seed %s is missing or stale in %s (err %v); run with -args -update-fuzz-corpus", s.name, fuzzCorpusDir, err)
		}
	}
	for key := range apis {
		if !served[key] {
			t.Errorf("no fuzz seed for served API %s", kmsg.NameForKey(key))
		}
	}
}
