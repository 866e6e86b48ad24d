package main

// A healthy client keeps producing while other connections send garbage:
// random bytes, absurd frame sizes, truncated frames, unknown APIs,
// unsupported versions and a corrupt record batch. The broker must answer
// what the protocol lets it answer, close what it must close, and lose,
// refuse or corrupt none of the healthy client's records.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	healthyTopic      = "healthy"
	healthyPartitions = 3
	healthyRecords    = 2000
	// crcControlTopic receives the intact twin of the corrupt batch, to
	// show that only the corruption made the broker refuse it.
	crcControlTopic = "crc-control"
	// rawIOGuard bounds every read and write of a raw connection: a hang
	// guard, never a timing assertion.
	rawIOGuard = 60 * time.Second
)

func TestHealthyClientSurvivesGarbageConnections(t *testing.T) {
	tb := startTestBroker(t, "")
	ctx := testCtx(t, 120*time.Second)
	createTopic(t, ctx, tb.addr, healthyTopic, healthyPartitions)
	createTopic(t, ctx, tb.addr, crcControlTopic, 1)

	cl, err := kgo.NewClient(kgo.SeedBrokers(tb.addr), kgo.DefaultProduceTopic(healthyTopic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	halfway := make(chan struct{})     // the producer is well under way
	garbageSent := make(chan struct{}) // every garbage connection has sent its bytes
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-halfway
		runGarbage(t, tb.addr, garbageSent)
	}()
	acks := produceHealthy(t, ctx, cl, halfway, garbageSent)
	wg.Wait()

	checkHealthyLog(t, ctx, tb.addr, acks)
	if err := checkApiVersions(tb.addr); err != nil {
		t.Errorf("fresh ApiVersions after the garbage: %v", err)
	}
}

// healthyAck is where one healthy record landed.
type healthyAck struct {
	partition int32
	offset    int64
}

// produceHealthy produces healthyRecords records, the second half only once
// every garbage connection has sent its garbage, so they overlap. It returns
// where each record landed, by value.
func produceHealthy(t *testing.T, ctx context.Context, cl *kgo.Client, halfway, garbageSent chan struct{}) map[string]healthyAck {
	var mu sync.Mutex // guards acks
	acks := map[string]healthyAck{}
	var wg sync.WaitGroup
	for i := range healthyRecords {
		switch i {
		case healthyRecords / 4:
			close(halfway)
		case healthyRecords / 2:
			<-garbageSent
		}
		wg.Add(1)
		rec := &kgo.Record{Key: fmt.Appendf(nil, "k%d", i%17), Value: fmt.Appendf(nil, "healthy-%04d", i)}
		cl.Produce(ctx, rec, func(r *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				t.Errorf("healthy record %s not acknowledged: %v", r.Value, err)
				return
			}
			mu.Lock()
			acks[string(r.Value)] = healthyAck{r.Partition, r.Offset}
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(acks) != healthyRecords {
		t.Fatalf("%d healthy records acknowledged, want %d", len(acks), healthyRecords)
	}
	return acks
}

// checkHealthyLog reads the healthy topic back and checks that it holds
// exactly the acknowledged records, each where its acknowledgement said:
// nothing lost, nothing extra (the corrupt batch above all).
func checkHealthyLog(t *testing.T, ctx context.Context, addr string, acks map[string]healthyAck) {
	t.Helper()
	cons, err := kgo.NewClient(kgo.SeedBrokers(addr),
		kgo.ConsumeTopics(healthyTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	ends, err := kadm.NewClient(cons).ListEndOffsets(ctx, healthyTopic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		t.Fatalf("end offsets: %v", err)
	}
	var total int64
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	if total != healthyRecords {
		t.Errorf("healthy topic holds %d records, want %d", total, healthyRecords)
	}
	seen := map[string]bool{}
	for len(seen) < healthyRecords {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("read back after %d records: %v", len(seen), err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			v := string(r.Value)
			if want, ok := acks[v]; !ok || seen[v] || want != (healthyAck{r.Partition, r.Offset}) {
				t.Errorf("read %q at %d/%d: acknowledged at %+v (known %v, seen before %v)", v, r.Partition, r.Offset, want, ok, seen[v])
			}
			seen[v] = true
		})
	}
}

// garbageCase is one misbehaving connection. send writes its bytes; check
// then reads what the broker does about them and says what was wrong.
type garbageCase struct {
	name  string
	send  func(c *rawConn) error
	check func(c *rawConn) error
}

// garbageCases are the misbehaving connections, each on its own socket.
func garbageCases() []garbageCase {
	cases := []garbageCase{
		{"frame of 2 GiB", sendSize(1 << 31), expectClosed},
		{"frame of 2 GiB - 1", sendSize(1<<31 - 1), expectClosed},
		{"truncated frame", sendTruncated, expectClosed},
		{"unknown API key 9999", sendHeaderOnly(9999, 0), expectClosed},
		{"Produce v1", sendProduceV1, expectClosed},
		{"Fetch v99", sendHeaderOnly(int16(kmsg.Fetch), 99), expectClosed},
		{"ApiVersions v99", sendApiVersionsV99, checkApiVersionsV99},
		{"record batch with a bad CRC", sendCorruptBatch, checkCorruptBatch},
	}
	for seed := range uint64(4) {
		cases = append(cases,
			garbageCase{fmt.Sprintf("random bytes %d", seed), sendRandom(seed), expectClosed},
			garbageCase{fmt.Sprintf("random frame %d", seed), sendRandomFrame(seed), expectClosed})
	}
	return cases
}

// runGarbage opens every garbage connection at once, sends each one's
// garbage, closes sent, then checks how the broker dealt with each.
func runGarbage(t *testing.T, addr string, sent chan struct{}) {
	cases := garbageCases()
	var sending, checking sync.WaitGroup
	sending.Add(len(cases))
	checking.Add(len(cases))
	for _, gc := range cases {
		go func() {
			defer checking.Done()
			if err := runGarbageCase(addr, gc, &sending); err != nil {
				t.Errorf("%s: %v", gc.name, err)
			}
		}()
	}
	sending.Wait()
	close(sent)
	checking.Wait()
}

func runGarbageCase(addr string, gc garbageCase, sending *sync.WaitGroup) error {
	c, err := dialRaw(addr)
	if err != nil {
		sending.Done()
		return err
	}
	defer c.Close()
	err = gc.send(c)
	sending.Done()
	if err != nil && !closedByPeer(err) { // the broker may close before all is written
		return fmt.Errorf("send: %w", err)
	}
	return gc.check(c)
}

// rawConn is a Kafka connection without a client library, to send what no
// client would.
type rawConn struct {
	net.Conn
}

func dialRaw(addr string) (*rawConn, error) {
	nc, err := net.DialTimeout("tcp", addr, rawIOGuard)
	if err != nil {
		return nil, err
	}
	nc.SetDeadline(time.Now().Add(rawIOGuard))
	return &rawConn{nc}, nil
}

// frame is a request frame: size, request header v1 (v2 when flexible adds
// the empty tagged fields) and body.
func frame(key, version int16, corrID int32, flexible bool, body []byte) []byte {
	buf := []byte{0, 0, 0, 0}
	buf = binary.BigEndian.AppendUint16(buf, uint16(key))
	buf = binary.BigEndian.AppendUint16(buf, uint16(version))
	buf = binary.BigEndian.AppendUint32(buf, uint32(corrID))
	buf = kbin.AppendNullableString(buf, ptr("sediment-garbage"))
	if flexible {
		buf = append(buf, 0)
	}
	buf = append(buf, body...)
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	return buf
}

func ptr[T any](v T) *T { return &v }

// send writes req as a well-formed frame.
func (c *rawConn) send(req kmsg.Request, corrID int32) error {
	_, err := c.Write(frame(req.Key(), req.GetVersion(), corrID, req.IsFlexible(), req.AppendTo(nil)))
	return err
}

// readResponse reads one response frame and returns its body after the
// correlation id, checking that id.
func (c *rawConn) readResponse(corrID int32) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return nil, fmt.Errorf("read response size: %w", err)
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 4 || n > 64<<20 {
		return nil, fmt.Errorf("response frame of %d bytes", n)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(c, buf); err != nil {
		return nil, fmt.Errorf("read response body: %w", err)
	}
	if got := int32(binary.BigEndian.Uint32(buf)); got != corrID {
		return nil, fmt.Errorf("response correlation id %d, want %d", got, corrID)
	}
	return buf[4:], nil
}

// roundTrip sends req and decodes its response (the response header has
// tagged fields when flexible, except for ApiVersions, whose is always v0).
func (c *rawConn) roundTrip(req kmsg.Request, corrID int32) (kmsg.Response, error) {
	if err := c.send(req, corrID); err != nil {
		return nil, err
	}
	body, err := c.readResponse(corrID)
	if err != nil {
		return nil, err
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	rd := kbin.Reader{Src: body}
	if resp.IsFlexible() && resp.Key() != int16(kmsg.ApiVersions) {
		kmsg.SkipTags(&rd)
	}
	if err := resp.ReadFrom(rd.Src); err != nil {
		return nil, fmt.Errorf("decode %s v%d response: %w", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return resp, nil
}

// closedByPeer says whether err is the peer closing (or resetting) the
// connection.
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ENOTCONN) // shutdown(2) after the peer reset the connection
}

// expectClosed reads until the broker closes the connection and fails on
// any byte it sends first: these requests have no answer but the close.
func expectClosed(c *rawConn) error {
	var buf [512]byte
	n, err := io.ReadAtLeast(c, buf[:], 1)
	switch {
	case n > 0:
		return fmt.Errorf("broker answered %d bytes (% x) instead of closing", n, buf[:n])
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("broker kept the connection open for %v", rawIOGuard)
	case !closedByPeer(err):
		return fmt.Errorf("read: %w", err)
	}
	return nil
}

// sendSize announces a frame of n bytes (as a signed 32-bit size: 2 GiB
// wraps negative) and sends a few bytes of it.
func sendSize(n uint32) func(c *rawConn) error {
	return func(c *rawConn) error {
		buf := binary.BigEndian.AppendUint32(nil, n)
		_, err := c.Write(append(buf, make([]byte, 16)...))
		return err
	}
}

// sendTruncated announces 100 bytes, sends 10 and closes its writing side.
func sendTruncated(c *rawConn) error {
	buf := binary.BigEndian.AppendUint32(nil, 100)
	buf = append(buf, 0, byte(kmsg.Metadata), 0, 12, 0, 0, 0, 1, 0xff, 0xff)
	if _, err := c.Write(buf); err != nil {
		return err
	}
	return c.Conn.(*net.TCPConn).CloseWrite()
}

// sendHeaderOnly sends a well-formed header for key at version and a few
// bytes of body no one can parse.
func sendHeaderOnly(key, version int16) func(c *rawConn) error {
	return func(c *rawConn) error {
		_, err := c.Write(frame(key, version, 7, false, []byte{0, 0, 0, 0, 0, 0}))
		return err
	}
}

// sendProduceV1 sends a well-formed Produce v1 (removed in Kafka 4.0, not
// served here). Its response has no top-level error code, so the broker
// can only close the connection.
func sendProduceV1(c *rawConn) error {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 1, -1, 30000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = healthyTopic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = []byte("a v1 message set would go here")
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return c.send(req, 11)
}

// sendRandom sends 4 KiB of random bytes, size prefix included, then
// closes its writing side: whatever size the first four bytes announce,
// the broker must end up closing.
func sendRandom(seed uint64) func(c *rawConn) error {
	return func(c *rawConn) error {
		rng := rand.New(rand.NewPCG(seed, 0x5ed1))
		if _, err := c.Write(randomBytes(rng, 4096)); err != nil {
			return err
		}
		return c.Conn.(*net.TCPConn).CloseWrite()
	}
}

// sendRandomFrame sends a whole frame of 1 KiB of random bytes: a random
// API key, version and header that the broker must refuse on its own.
func sendRandomFrame(seed uint64) func(c *rawConn) error {
	return func(c *rawConn) error {
		rng := rand.New(rand.NewPCG(seed, 0xf4a3e))
		buf := binary.BigEndian.AppendUint32(nil, 1024)
		_, err := c.Write(append(buf, randomBytes(rng, 1024)...))
		return err
	}
}

// sendApiVersionsV99 sends ApiVersions at a version no broker knows, with a
// v2 request header and a body the broker cannot know the layout of.
func sendApiVersionsV99(c *rawConn) error {
	_, err := c.Write(frame(int16(kmsg.ApiVersions), 99, 99, true, []byte{1, 2, 3, 4, 5}))
	return err
}

// checkApiVersionsV99 expects the KIP-511 answer: a v0 response with
// UNSUPPORTED_VERSION and the served keys, and a connection that stays open
// for the client's retry at a served version.
func checkApiVersionsV99(c *rawConn) error {
	body, err := c.readResponse(99)
	if err != nil {
		return err
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	if err := resp.ReadFrom(body); err != nil {
		return fmt.Errorf("decode as ApiVersions v0: %w", err)
	}
	if string(resp.AppendTo(nil)) != string(body) {
		return fmt.Errorf("answer is not exactly a v0 ApiVersions response (%d bytes, v0 re-encodes to %d)", len(body), len(resp.AppendTo(nil)))
	}
	if resp.ErrorCode != kerr.UnsupportedVersion.Code {
		return fmt.Errorf("error code %d, want UNSUPPORTED_VERSION (35)", resp.ErrorCode)
	}
	if err := checkApiKeys(resp.ApiKeys); err != nil {
		return err
	}
	retry := kmsg.NewPtrApiVersionsRequest()
	retry.Version = 0
	answer, err := c.roundTrip(retry, 100)
	if err != nil {
		return fmt.Errorf("retry at v0 on the same connection: %w", err)
	}
	if code := answer.(*kmsg.ApiVersionsResponse).ErrorCode; code != 0 {
		return fmt.Errorf("retry at v0: error code %d", code)
	}
	return nil
}

// checkApiKeys checks that keys advertise ApiVersions v0-v3 at least and
// Produce and Fetch.
func checkApiKeys(keys []kmsg.ApiVersionsResponseApiKey) error {
	served := map[int16]kmsg.ApiVersionsResponseApiKey{}
	for _, k := range keys {
		served[k.ApiKey] = k
	}
	if av, ok := served[int16(kmsg.ApiVersions)]; !ok || av.MinVersion != 0 || av.MaxVersion < 3 {
		return fmt.Errorf("ApiVersions advertised as %+v (present %v), want v0-v3 at least", av, ok)
	}
	for _, key := range []kmsg.Key{kmsg.Produce, kmsg.Fetch, kmsg.Metadata} {
		if _, ok := served[int16(key)]; !ok {
			return fmt.Errorf("%s missing from the %d advertised keys", kmsg.NameForKey(int16(key)), len(keys))
		}
	}
	return nil
}

// corruptProduce is a Produce v9 carrying one batch twice: with one byte of
// its record flipped after the CRC was computed (to the healthy topic), and
// intact (to the control topic).
func corruptProduce() *kmsg.ProduceRequest {
	intact := recordBatch([]byte("garbage-key"), []byte("this batch must never be stored"))
	corrupt := append([]byte(nil), intact...)
	corrupt[len(corrupt)-3] ^= 0x20 // inside the value
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, -1, 30000
	for _, tb := range []struct {
		topic string
		batch []byte
	}{{healthyTopic, corrupt}, {crcControlTopic, intact}} {
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = tb.topic
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = tb.batch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	return req
}

// recordBatch encodes a valid, uncompressed, non-idempotent v2 batch of one
// record, CRC included.
func recordBatch(key, value []byte) []byte {
	rec := kmsg.Record{Key: key, Value: value}
	rec.Length = int32(len(rec.AppendTo(nil)) - 1) // the rest, after a 1-byte varint
	records := rec.AppendTo(nil)
	now := time.Now().UnixMilli()
	b := kmsg.RecordBatch{
		Length: int32(49 + len(records)), Magic: 2,
		FirstTimestamp: now, MaxTimestamp: now,
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: 1, Records: records,
	}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

func sendCorruptBatch(c *rawConn) error { return c.send(corruptProduce(), 21) }

// checkCorruptBatch expects CORRUPT_MESSAGE on the corrupt partition only,
// and a connection that stays open: a bad batch is a per-partition error.
func checkCorruptBatch(c *rawConn) error {
	body, err := c.readResponse(21)
	if err != nil {
		return err
	}
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = 9
	rd := kbin.Reader{Src: body}
	kmsg.SkipTags(&rd)
	if err := resp.ReadFrom(rd.Src); err != nil {
		return fmt.Errorf("decode Produce v9 response: %w", err)
	}
	want := map[string]int16{healthyTopic: kerr.CorruptMessage.Code, crcControlTopic: 0}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rp.ErrorCode != want[rt.Topic] {
				return fmt.Errorf("%s/%d: error code %d, want %d", rt.Topic, rp.Partition, rp.ErrorCode, want[rt.Topic])
			}
			delete(want, rt.Topic)
		}
	}
	if len(want) > 0 {
		return fmt.Errorf("no answer for %v", want)
	}
	return checkApiVersionsOn(c, 22)
}

// checkApiVersions asks a fresh connection for ApiVersions.
func checkApiVersions(addr string) error {
	c, err := dialRaw(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	return checkApiVersionsOn(c, 1)
}

// checkApiVersionsOn sends ApiVersions v3 on c and checks the answer.
func checkApiVersionsOn(c *rawConn, corrID int32) error {
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "sediment-garbage", "1"
	resp, err := c.roundTrip(req, corrID)
	if err != nil {
		return fmt.Errorf("ApiVersions v3: %w", err)
	}
	av := resp.(*kmsg.ApiVersionsResponse)
	if av.ErrorCode != 0 {
		return fmt.Errorf("ApiVersions v3: error code %d", av.ErrorCode)
	}
	return checkApiKeys(av.ApiKeys)
}
