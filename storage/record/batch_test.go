package record

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
)

// testBatch describes a record batch for tests.
type testBatch struct {
	values     [][]byte
	firstTS    int64
	pid        int64
	epoch      int16
	seq        int32
	attributes int16
}

// encode builds a valid, uncompressed v2 record batch at base offset 0.
func (tb testBatch) encode() []byte {
	var recs []byte
	for i, v := range tb.values {
		var body []byte
		body = append(body, 0)                          // attributes
		body = binary.AppendVarint(body, int64(i))      // timestamp delta
		body = binary.AppendVarint(body, int64(i))      // offset delta
		body = binary.AppendVarint(body, -1)            // null key
		body = binary.AppendVarint(body, int64(len(v))) // value
		body = append(body, v...)
		body = binary.AppendVarint(body, 0) // headers
		recs = binary.AppendVarint(recs, int64(len(body)))
		recs = append(recs, body...)
	}
	pid := tb.pid
	if pid == 0 {
		pid = -1
	}
	n := int32(len(tb.values))
	b := make([]byte, BatchHeaderLen, BatchHeaderLen+len(recs))
	binary.BigEndian.PutUint32(b[batchLengthOff:], uint32(BatchHeaderLen-12+len(recs)))
	b[batchMagicOff] = 2
	binary.BigEndian.PutUint16(b[batchAttrOff:], uint16(tb.attributes))
	binary.BigEndian.PutUint32(b[batchLastDelta:], uint32(n-1))
	binary.BigEndian.PutUint64(b[batchFirstTsOff:], uint64(tb.firstTS))
	binary.BigEndian.PutUint64(b[batchMaxTsOff:], uint64(tb.firstTS+int64(n)-1))
	binary.BigEndian.PutUint64(b[batchPIDOff:], uint64(pid))
	binary.BigEndian.PutUint16(b[batchPEpochOff:], uint16(tb.epoch))
	binary.BigEndian.PutUint32(b[batchSeqOff:], uint32(tb.seq))
	binary.BigEndian.PutUint32(b[batchCountOff:], uint32(n))
	b = append(b, recs...)
	binary.BigEndian.PutUint32(b[batchCRCOff:], crc32.Checksum(b[batchAttrOff:], crc32c))
	return b
}

func values(n int, prefix string) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(prefix + string(rune('a'+i%26)))
	}
	return out
}

func TestParseBatch(t *testing.T) {
	good := testBatch{values: values(3, "v"), firstTS: 1000}.encode()
	if _, err := ParseBatch(good); err != nil {
		t.Fatalf("valid batch rejected: %v", err)
	}
	txn, err := ParseBatch(testBatch{values: values(2, "t"), pid: 7, epoch: 3, attributes: attrTransactional}.encode())
	if err != nil || !txn.Transactional() || txn.Control() {
		t.Fatalf("transactional batch: %+v, %v", txn, err)
	}
	mutate := func(f func(b []byte) []byte) []byte {
		return f(append([]byte(nil), good...))
	}
	cases := []struct {
		name string
		raw  []byte
		want error
	}{
		{"short", good[:40], ErrCorruptBatch},
		{"truncated", good[:len(good)-1], ErrCorruptBatch},
		{"two batches", append(append([]byte(nil), good...), good...), ErrInvalidRecord},
		{"bad crc", mutate(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), ErrCorruptBatch},
		{"magic 1", mutate(func(b []byte) []byte { b[batchMagicOff] = 1; return b }), ErrUnsupportedFmt},
		{"count mismatch", testBatch{values: values(2, "x")}.encodeWith(func(b []byte) { binary.BigEndian.PutUint32(b[batchCountOff:], 5) }), ErrInvalidRecord},
		{"control", testBatch{values: values(1, "x"), attributes: attrControl}.encode(), ErrInvalidRecord},
		{"transactional without producer", testBatch{values: values(1, "x"), pid: -1, attributes: attrTransactional}.encode(), ErrInvalidRecord},
		{"client marker", MarkerBatch(7, 0, ControlMarker{Commit: true}, 1), ErrInvalidRecord},
		{"codec 7", testBatch{values: values(1, "x"), attributes: 7}.encode(), ErrInvalidRecord},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseBatch(tc.raw); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// encodeWith encodes, applies edit and recomputes the CRC.
func (tb testBatch) encodeWith(edit func([]byte)) []byte {
	b := tb.encode()
	edit(b)
	binary.BigEndian.PutUint32(b[batchCRCOff:], crc32.Checksum(b[batchAttrOff:], crc32c))
	return b
}

func TestLogAppendTimeRewrite(t *testing.T) {
	b := testBatch{values: values(2, "v"), firstTS: 5}.encode()
	SetLogAppendTime(b, 99)
	pb, err := ParseBatch(b)
	if err != nil {
		t.Fatalf("rewritten batch invalid: %v", err)
	}
	if pb.MaxTimestamp != 99 || pb.Attributes&attrLogAppendTime == 0 {
		t.Fatalf("max ts %d attrs %x", pb.MaxTimestamp, pb.Attributes)
	}
	var ts []int64
	Timestamps(b, func(_, t int64) bool { ts = append(ts, t); return true })
	if len(ts) != 2 || ts[0] != 99 || ts[1] != 99 {
		t.Fatalf("record timestamps %v, want the append time", ts)
	}
}

func FuzzParseBatch(f *testing.F) {
	f.Add(testBatch{values: values(3, "v"), firstTS: 1000}.encode())
	f.Add(testBatch{values: values(1, "x"), pid: 7, epoch: 1, seq: 5}.encode())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		b, err := ParseBatch(raw)
		if err != nil {
			return
		}
		if len(b.Raw) != len(raw) || b.NumRecords <= 0 {
			t.Fatalf("accepted batch with %d records, %d bytes", b.NumRecords, len(b.Raw))
		}
		// What it accepts walks as exactly one stored batch.
		n := 0
		if err := SplitBatches(raw, func(_, _ int64, r []byte) bool { n++; return true }); err != nil || n != 1 {
			t.Fatalf("accepted batch splits into %d (err %v)", n, err)
		}
		_ = Timestamps(raw, func(_, _ int64) bool { return true }) // must not panic
	})
}
