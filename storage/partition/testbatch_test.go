package partition

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/sediment-io/sediment/storage/record"
)

// Offsets in a v2 batch header of the fields tests set by hand (the layout
// is drawn in storage/record/batch.go).
const (
	testEpochOff  = 12
	testAttrOff   = 21
	testCRCOff    = 17
	testPIDOff    = 43
	testPEpochOff = 51
	testSeqOff    = 53
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

// encode builds a valid, uncompressed v2 record batch at base offset 0:
// record i has null key, value values[i] and timestamp firstTS+i.
func (tb testBatch) encode() []byte {
	recs := make([]record.Record, len(tb.values))
	for i, v := range tb.values {
		recs[i] = record.Record{Timestamp: tb.firstTS + int64(i), Value: v}
	}
	b := record.EncodeBatch(recs)
	pid := tb.pid
	if pid == 0 {
		pid = -1
	}
	binary.BigEndian.PutUint16(b[testAttrOff:], uint16(tb.attributes))
	binary.BigEndian.PutUint64(b[testPIDOff:], uint64(pid))
	binary.BigEndian.PutUint16(b[testPEpochOff:], uint16(tb.epoch))
	binary.BigEndian.PutUint32(b[testSeqOff:], uint32(tb.seq))
	crc := crc32.Checksum(b[testAttrOff:], crc32.MakeTable(crc32.Castagnoli))
	binary.BigEndian.PutUint32(b[testCRCOff:], crc)
	return b
}

func values(n int, prefix string) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(prefix + string(rune('a'+i%26)))
	}
	return out
}
