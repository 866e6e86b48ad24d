package protocol

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/objectstore/mem"
	"github.com/sediment-io/sediment/storage/partition"
)

// ioBound caps every blocking read or write a test client makes. It is a
// hang guard, never an assertion about speed: a correct broker answers long
// before it, and a broken one fails the test here instead of hanging it.
const ioBound = 60 * time.Second

// testBroker is a real Server on 127.0.0.1:0 over a real partition.Log:
// bbolt metadata and the WAL in a temp dir, the in-memory object store.
type testBroker struct {
	t    testing.TB
	srv  *Server
	log  *partition.Log
	meta *metadata.Store
	addr string
	// closeLog closes the log and metadata (once; the test's cleanup
	// calls it too).
	closeLog func() error
}

// brokerSetup is what startBroker builds from; options edit it.
type brokerSetup struct {
	cfg          Config
	brokerConfig map[string]string // dynamic broker configs set before serving
	topics       []metadata.Topic  // created in metadata before the log opens
	dir          string            // data dir; t.TempDir() when empty
	logOpts      func(*partition.Options)
	noTxns       bool // serve without a transaction coordinator
}

type brokerOpt func(*brokerSetup)

// withBrokerConfig sets dynamic broker configs (auto.create.topics.enable,
// num.partitions, …) before the server takes connections.
func withBrokerConfig(kv ...string) brokerOpt {
	return func(s *brokerSetup) {
		for i := 0; i+1 < len(kv); i += 2 {
			s.brokerConfig[kv[i]] = kv[i+1]
		}
	}
}

// withoutTxns serves without a transaction coordinator (Config.Txns nil).
func withoutTxns() brokerOpt {
	return func(s *brokerSetup) { s.noTxns = true }
}

// withMaxRequestBytes sets --max-request-bytes.
func withMaxRequestBytes(n int32) brokerOpt {
	return func(s *brokerSetup) { s.cfg.MaxRequestBytes = n }
}

// withTopic creates a topic with a fixed id before the log opens, so that
// requests naming topics by id can be built ahead of time.
func withTopic(name string, id metadata.TopicID, partitions int32) brokerOpt {
	return func(s *brokerSetup) {
		s.topics = append(s.topics, metadata.Topic{Name: name, ID: id, Partitions: partitions})
	}
}

// testLogger discards broker logs unless the test runs with -v.
func testLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.DiscardHandler)
}

// openTestLog opens metadata and a partition.Log for s and registers their
// closing with tb; the returned close function may be called earlier (it
// closes once).
func openTestLog(tb testing.TB, s *brokerSetup) (*partition.Log, *metadata.Store, func() error) {
	tb.Helper()
	if s.dir == "" {
		s.dir = tb.TempDir()
	}
	log, meta, closeAll, err := openLog(s)
	if err != nil {
		tb.Fatal(err)
	}
	closeOnce := sync.OnceValue(closeAll)
	tb.Cleanup(func() {
		if err := closeOnce(); err != nil {
			tb.Errorf("close log: %v", err)
		}
	})
	return log, meta, closeOnce
}

// openLog opens bbolt metadata and a partition.Log in s.dir over a fresh
// in-memory object store; closeAll closes all three.
func openLog(s *brokerSetup) (log *partition.Log, meta *metadata.Store, closeAll func() error, err error) {
	ctx := context.Background()
	kv, err := metadata.OpenBolt(s.dir + "/meta.db")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("open metadata: %w", err)
	}
	meta = metadata.NewStore(kv)
	for _, mt := range s.topics {
		mt.CreatedMs = 1
		if err := meta.CreateTopic(ctx, mt); err != nil {
			meta.Close()
			return nil, nil, nil, fmt.Errorf("create topic %s: %w", mt.Name, err)
		}
	}
	store := mem.New()
	opts := partition.Options{Meta: meta, Store: store, WALDir: s.dir + "/wal", Logger: testLogger()}
	if s.logOpts != nil {
		s.logOpts(&opts)
	}
	if log, err = partition.Open(ctx, opts); err != nil {
		meta.Close()
		return nil, nil, nil, fmt.Errorf("open log: %w", err)
	}
	closeAll = func() error {
		err := log.Close()
		store.Close()
		return errors.Join(err, meta.Close())
	}
	if len(s.brokerConfig) > 0 {
		edit := func(cur map[string]string) (map[string]string, error) {
			maps.Copy(cur, s.brokerConfig)
			return cur, nil
		}
		if err := log.BrokerConfig().Set(ctx, edit, false); err != nil {
			closeAll()
			return nil, nil, nil, fmt.Errorf("set broker config: %w", err)
		}
	}
	return log, meta, closeAll, nil
}

// startBroker starts a broker that serves until the test ends.
func startBroker(tb testing.TB, opts ...brokerOpt) *testBroker {
	tb.Helper()
	s := &brokerSetup{brokerConfig: map[string]string{}}
	s.cfg = Config{NodeID: 0, AdvertiseHost: "127.0.0.1", ClusterID: "test-cluster", Logger: testLogger()}
	for _, o := range opts {
		o(s)
	}
	log, meta, closeLog := openTestLog(tb, s)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("listen: %v", err)
	}
	s.cfg.AdvertisePort = int32(ln.Addr().(*net.TCPAddr).Port)
	cfg, err := withServices(s.cfg, log, meta)
	if err != nil {
		tb.Fatal(err)
	}
	if s.noTxns {
		cfg.Txns.Close()
		cfg.Txns = nil
	}
	srv := NewServer(cfg, log, meta)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	tb.Cleanup(func() { // runs before the log's cleanup (LIFO)
		if err := srv.Close(); err != nil {
			tb.Errorf("close server: %v", err)
		}
		if cfg.Txns != nil {
			if err := cfg.Txns.Close(); err != nil {
				tb.Errorf("close transaction coordinator: %v", err)
			}
		}
		if err := <-served; err != nil {
			tb.Errorf("serve: %v", err)
		}
	})
	return &testBroker{t: tb, srv: srv, log: log, meta: meta, addr: ln.Addr().String(), closeLog: closeLog}
}

// createTopic creates a topic directly on the log and returns it.
func (b *testBroker) createTopic(name string, partitions int32, configs map[string]string) *partition.Topic {
	b.t.Helper()
	t, err := b.log.CreateTopic(context.Background(), name, partitions, configs, false)
	if err != nil {
		b.t.Fatalf("create topic %s: %v", name, err)
	}
	return t
}

// hasTopic says whether the live log knows the topic.
func (b *testBroker) hasTopic(name string) bool {
	_, ok := b.log.Topic(name)
	return ok
}

// rawClient speaks the wire protocol byte by byte: it frames requests with
// kmsg's RequestFormatter (request header v1, or v2 with its tagged fields
// for flexible versions) and parses response headers itself.
type rawClient struct {
	t    testing.TB
	nc   net.Conn
	br   *bufio.Reader
	fmtr *kmsg.RequestFormatter
	corr int32
}

func (b *testBroker) dial() *rawClient {
	b.t.Helper()
	nc, err := net.DialTimeout("tcp", b.addr, ioBound)
	if err != nil {
		b.t.Fatalf("dial: %v", err)
	}
	c := &rawClient{t: b.t, nc: nc, br: bufio.NewReader(nc), fmtr: kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw-test"))}
	b.t.Cleanup(func() { nc.Close() })
	return c
}

// frame returns the framed bytes of req with the next correlation id.
func (c *rawClient) frame(req kmsg.Request) ([]byte, int32) {
	c.corr++
	return c.fmtr.AppendRequest(nil, req, c.corr), c.corr
}

// send writes one request and returns its correlation id.
func (c *rawClient) send(req kmsg.Request) int32 {
	c.t.Helper()
	buf, corr := c.frame(req)
	c.write(buf)
	return corr
}

func (c *rawClient) write(buf []byte) {
	c.t.Helper()
	c.nc.SetWriteDeadline(time.Now().Add(ioBound))
	if _, err := c.nc.Write(buf); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// readFrame reads one response frame and returns its correlation id and
// the bytes after it.
func (c *rawClient) readFrame() (int32, []byte, error) {
	c.nc.SetReadDeadline(time.Now().Add(ioBound))
	var size [4]byte
	if _, err := io.ReadFull(c.br, size[:]); err != nil {
		return 0, nil, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 4 || n > 256<<20 {
		return 0, nil, errors.New("bad response size " + strconv.Itoa(int(n)))
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(c.br, buf); err != nil {
		return 0, nil, err
	}
	return int32(binary.BigEndian.Uint32(buf)), buf[4:], nil
}

// recv reads the response to req, which must carry correlation id corr.
func (c *rawClient) recv(req kmsg.Request, corr int32) kmsg.Response {
	c.t.Helper()
	got, body, err := c.readFrame()
	if err != nil {
		c.t.Fatalf("read response to %s (corr %d): %v", kmsg.NameForKey(req.Key()), corr, err)
	}
	if got != corr {
		c.t.Fatalf("response correlation id %d, want %d (%s)", got, corr, kmsg.NameForKey(req.Key()))
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if err := decodeResponseBody(resp, body); err != nil {
		c.t.Fatalf("decode %s v%d response: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return resp
}

// decodeResponseBody parses what follows the correlation id: the response
// header's tagged fields when flexible (never for ApiVersions), then the body.
func decodeResponseBody(resp kmsg.Response, body []byte) error {
	if resp.IsFlexible() && resp.Key() != int16(kmsg.ApiVersions) {
		var err error
		if body, err = skipTaggedFields(body); err != nil {
			return err
		}
	}
	return resp.ReadFrom(body)
}

func skipTaggedFields(b []byte) ([]byte, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 {
		return nil, errors.New("bad tag count")
	}
	b = b[w:]
	for range n {
		if _, w = binary.Uvarint(b); w <= 0 {
			return nil, errors.New("bad tag")
		}
		b = b[w:]
		size, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) < size {
			return nil, errors.New("bad tag size")
		}
		b = b[w+int(size):]
	}
	return b, nil
}

// expectClosed asserts that the broker closes the connection without
// sending anything more.
func (c *rawClient) expectClosed() {
	c.t.Helper()
	corr, _, err := c.readFrame()
	if err == nil {
		c.t.Fatalf("connection still open: got a response with correlation id %d", corr)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.t.Fatalf("connection still open after %v", ioBound)
	}
}

// roundTrip sends req and returns its decoded response.
func roundTrip[R kmsg.Response](c *rawClient, req kmsg.Request) R {
	c.t.Helper()
	resp := c.recv(req, c.send(req))
	r, ok := resp.(R)
	if !ok {
		c.t.Fatalf("response is %T", resp)
	}
	return r
}

// checkServing asserts that the broker answers a fresh connection.
func (b *testBroker) checkServing() {
	b.t.Helper()
	c := b.dial()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "raw-test", "1.0"
	resp := roundTrip[*kmsg.ApiVersionsResponse](c, req)
	if resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
		b.t.Fatalf("ApiVersions on a new connection: error %d, %d keys", resp.ErrorCode, len(resp.ApiKeys))
	}
}

// errName names a Kafka error code in failure messages.
func errName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return e.Message
	}
	return strconv.Itoa(int(code))
}

// wantCode fails the test when got is not want.
func wantCode(t testing.TB, what string, got, want int16) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: error %s, want %s", what, errName(got), errName(want))
	}
}

// testRecord is one record of a test batch.
type testRecord struct {
	key, value []byte
	ts         int64 // absolute timestamp
}

// batchSpec describes a v2 record batch to build.
type batchSpec struct {
	records    []testRecord
	codec      int8 // 0 none, 1 gzip, 4 zstd
	producerID int64
	epoch      int16
	seq        int32
	// transactional and control set the batch's attribute bits.
	transactional, control bool
}

// plainBatch returns a batch of n records, non-idempotent, values of size
// bytes each, timestamps from ts.
func plainBatch(n, size int, ts int64) batchSpec {
	s := batchSpec{producerID: -1, epoch: -1, seq: -1}
	for i := range n {
		v := make([]byte, size)
		for j := range v {
			v[j] = byte('a' + (i+j)%26)
		}
		s.records = append(s.records, testRecord{key: []byte("k" + strconv.Itoa(i)), value: v, ts: ts + int64(i)})
	}
	return s
}

// build encodes the batch (base offset 0), compressing the records when a
// codec is set, with a correct CRC.
func (s batchSpec) build(t testing.TB) []byte {
	t.Helper()
	first, maxTS := s.records[0].ts, s.records[0].ts
	var recs []byte
	for i, r := range s.records {
		maxTS = max(maxTS, r.ts)
		recs = appendRecord(recs, i, r.ts-first, r.key, r.value)
	}
	recs = compress(t, s.codec, recs)
	b := make([]byte, 61, 61+len(recs))
	binary.BigEndian.PutUint32(b[8:], uint32(49+len(recs)))
	b[16] = 2
	attrs := uint16(s.codec)
	if s.transactional {
		attrs |= attrTransactional
	}
	if s.control {
		attrs |= attrControl
	}
	binary.BigEndian.PutUint16(b[21:], attrs)
	binary.BigEndian.PutUint32(b[23:], uint32(len(s.records)-1))
	binary.BigEndian.PutUint64(b[27:], uint64(first))
	binary.BigEndian.PutUint64(b[35:], uint64(maxTS))
	binary.BigEndian.PutUint64(b[43:], uint64(s.producerID))
	binary.BigEndian.PutUint16(b[51:], uint16(s.epoch))
	binary.BigEndian.PutUint32(b[53:], uint32(s.seq))
	binary.BigEndian.PutUint32(b[57:], uint32(len(s.records)))
	b = append(b, recs...)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// compress applies a Kafka compression codec to encoded records.
func compress(t testing.TB, codec int8, recs []byte) []byte {
	t.Helper()
	switch codec {
	case 0:
		return recs
	case 1:
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(recs)
		if err := zw.Close(); err != nil {
			t.Fatalf("gzip: %v", err)
		}
		return buf.Bytes()
	case 4:
		enc, err := zstd.NewWriter(nil)
		if err != nil {
			t.Fatalf("zstd: %v", err)
		}
		defer enc.Close()
		return enc.EncodeAll(recs, nil)
	}
	t.Fatalf("codec %d not supported by the test", codec)
	return nil
}

func appendRecord(dst []byte, i int, tsDelta int64, key, value []byte) []byte {
	body := []byte{0} // attributes
	body = binary.AppendVarint(body, tsDelta)
	body = binary.AppendVarint(body, int64(i))
	body = appendVarintBytes(body, key)
	body = appendVarintBytes(body, value)
	body = binary.AppendVarint(body, 0) // headers
	dst = binary.AppendVarint(dst, int64(len(body)))
	return append(dst, body...)
}

func appendVarintBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	return append(binary.AppendVarint(dst, int64(len(b))), b...)
}

// batchCRCOK reports whether a stored batch's CRC matches its bytes.
func batchCRCOK(b []byte) bool {
	return len(b) >= 61 && binary.BigEndian.Uint32(b[17:]) == crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli))
}

// splitFetched splits fetched record batches into their raw bytes.
func splitFetched(t testing.TB, b []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for len(b) > 0 {
		if len(b) < 12 {
			t.Fatalf("%d trailing bytes in fetched batches", len(b))
		}
		n := int(binary.BigEndian.Uint32(b[8:])) + 12
		if n > len(b) {
			t.Fatalf("fetched batch of %d bytes in %d", n, len(b))
		}
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

// produceReq builds a Produce request for one partition.
func produceReq(version int16, acks int16, topic string, part int32, records []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = version, acks, 30000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = part, records
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// produce appends one batch with acks=-1 and returns the partition answer.
func (c *rawClient) produce(topic string, part int32, batch []byte) kmsg.ProduceResponseTopicPartition {
	c.t.Helper()
	resp := roundTrip[*kmsg.ProduceResponse](c, produceReq(9, -1, topic, part, batch))
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		c.t.Fatalf("produce answered %d topics", len(resp.Topics))
	}
	return resp.Topics[0].Partitions[0]
}

// mustProduce produces and fails the test on any error.
func (c *rawClient) mustProduce(topic string, part int32, batch []byte) int64 {
	c.t.Helper()
	p := c.produce(topic, part, batch)
	wantCode(c.t, "produce", p.ErrorCode, 0)
	return p.BaseOffset
}

// fetchReq builds a Fetch request for one partition.
func fetchReq(version int16, topic string, id [16]byte, part int32, offset int64) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = version, 0, 0, 50<<20
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = part, offset, 10<<20
	rp.CurrentLeaderEpoch, rp.LogStartOffset = -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// fetchOne fetches one partition and returns its answer.
func (c *rawClient) fetchOne(req *kmsg.FetchRequest) kmsg.FetchResponseTopicPartition {
	c.t.Helper()
	resp := roundTrip[*kmsg.FetchResponse](c, req)
	wantCode(c.t, "fetch (top level)", resp.ErrorCode, 0)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		c.t.Fatalf("fetch answered %d topics", len(resp.Topics))
	}
	return resp.Topics[0].Partitions[0]
}

func ptr[T any](v T) *T { return &v }
