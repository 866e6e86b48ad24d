package record

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"hash/crc32"
	"reflect"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

func sampleRecords() []Record {
	return []Record{
		{Offset: 0, Timestamp: 1000, Key: []byte("k0"), Value: []byte(`{"a":1}`),
			Headers: []Header{{Key: "h", Value: []byte("v")}, {Key: "null", Value: nil}}},
		{Offset: 1, Timestamp: 1005, Key: nil, Value: []byte{}},
		{Offset: 2, Timestamp: 999, Key: []byte{}, Value: nil},
	}
}

// recompress rewrites an uncompressed batch with codec, fixing length and CRC.
func recompress(t *testing.T, raw []byte, codec int) []byte {
	t.Helper()
	recs := raw[BatchHeaderLen:]
	var out []byte
	switch codec {
	case 1:
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(recs)
		zw.Close()
		out = buf.Bytes()
	case 2:
		out = s2.EncodeSnappy(nil, recs)
	case 3:
		var buf bytes.Buffer
		zw := lz4.NewWriter(&buf)
		zw.Write(recs)
		zw.Close()
		out = buf.Bytes()
	case 4:
		enc, _ := zstd.NewWriter(nil)
		out = enc.EncodeAll(recs, nil)
	}
	b := append(append([]byte(nil), raw[:BatchHeaderLen]...), out...)
	binary.BigEndian.PutUint32(b[batchLengthOff:], uint32(len(b)-12))
	binary.BigEndian.PutUint16(b[batchAttrOff:], uint16(codec))
	binary.BigEndian.PutUint32(b[batchCRCOff:], crc32.Checksum(b[batchAttrOff:], crc32c))
	return b
}

func TestDecodeRecordsEveryCodec(t *testing.T) {
	want := sampleRecords()
	plain := EncodeBatch(want)
	SetBaseOffset(plain, 100, 0)
	for codec := 0; codec <= 4; codec++ {
		raw := plain
		if codec > 0 {
			raw = recompress(t, plain, codec)
		}
		if _, err := ParseBatch(raw); err != nil {
			t.Fatalf("codec %d: batch does not validate: %v", codec, err)
		}
		var got []Record
		if err := Decode(raw, func(r Record) error { got = append(got, r); return nil }); err != nil {
			t.Fatalf("codec %d: %v", codec, err)
		}
		for i := range want {
			w := want[i]
			w.Offset += 100
			if !reflect.DeepEqual(got[i], w) {
				t.Fatalf("codec %d record %d: got %+v, want %+v", codec, i, got[i], w)
			}
		}
	}
}

func TestDecodeRecordsRejectsGarbage(t *testing.T) {
	raw := EncodeBatch(sampleRecords())
	for cut := BatchHeaderLen; cut < len(raw); cut++ {
		b := append([]byte(nil), raw[:cut]...)
		_ = Decode(b, func(Record) error { return nil }) // must not panic
	}
	if err := Decode(raw[:10], func(Record) error { return nil }); err == nil {
		t.Fatal("a truncated header decoded")
	}
}

func FuzzDecodeRecords(f *testing.F) {
	f.Add(EncodeBatch(sampleRecords()))
	f.Fuzz(func(t *testing.T, raw []byte) {
		_ = Decode(raw, func(Record) error { return nil })
	})
}
