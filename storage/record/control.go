package record

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// A transaction marker is a control batch (attributes transactional |
// control) of one record, as Kafka's EndTransactionMarker encodes it:
//
//	key:   version int16 (0) | type int16 (0 abort, 1 commit)
//	value: version int16 (0) | coordinator epoch int32
//
// The batch carries the producer id and epoch and base sequence -1.
const (
	controlAbort  = 0
	controlCommit = 1
)

// ControlMarker is the content of a transaction marker.
type ControlMarker struct {
	Commit           bool
	CoordinatorEpoch int32
}

// MarkerBatch builds the control batch that ends producer pid's transaction
// (commit or abort) at timestamp ts, ready for the broker to append: its
// base offset and leader epoch are set at the append.
func MarkerBatch(pid int64, epoch int16, m ControlMarker, ts int64) []byte {
	key := make([]byte, 4)
	if m.Commit {
		binary.BigEndian.PutUint16(key[2:], controlCommit)
	}
	value := make([]byte, 6)
	binary.BigEndian.PutUint32(value[2:], uint32(m.CoordinatorEpoch))
	body := appendRecord(nil, 0, 0, Record{Key: key, Value: value})
	b := make([]byte, BatchHeaderLen, BatchHeaderLen+len(body))
	binary.BigEndian.PutUint32(b[batchLengthOff:], uint32(BatchHeaderLen-12+len(body)))
	b[batchMagicOff] = 2
	binary.BigEndian.PutUint16(b[batchAttrOff:], attrTransactional|attrControl)
	binary.BigEndian.PutUint64(b[batchFirstTsOff:], uint64(ts))
	binary.BigEndian.PutUint64(b[batchMaxTsOff:], uint64(ts))
	binary.BigEndian.PutUint64(b[batchPIDOff:], uint64(pid))
	binary.BigEndian.PutUint16(b[batchPEpochOff:], uint16(epoch))
	binary.BigEndian.PutUint32(b[batchSeqOff:], ^uint32(0))
	binary.BigEndian.PutUint32(b[batchCountOff:], 1)
	b = append(b, body...)
	binary.BigEndian.PutUint32(b[batchCRCOff:], crc32.Checksum(b[batchAttrOff:], crc32c))
	return b
}

// ReadMarker decodes the transaction marker in a stored control batch. It
// never reads outside raw; a batch that is not a well-formed marker is an
// error (Kafka's other control types do not occur in a partition's log).
func ReadMarker(raw []byte) (ControlMarker, error) {
	if len(raw) < BatchHeaderLen {
		return ControlMarker{}, fmt.Errorf("%w: %d bytes is shorter than a batch header", ErrCorruptBatch, len(raw))
	}
	b := ReadHeader(raw)
	if !b.Control() || b.Codec() != 0 || b.NumRecords != 1 {
		return ControlMarker{}, fmt.Errorf("%w: not a transaction marker (attributes %#x, %d records)", ErrInvalidRecord, b.Attributes, b.NumRecords)
	}
	rec, _, err := decodeRecord(raw[BatchHeaderLen:])
	if err != nil {
		return ControlMarker{}, fmt.Errorf("%w: control record: %v", ErrCorruptBatch, err)
	}
	if len(rec.Key) < 4 || binary.BigEndian.Uint16(rec.Key) != 0 {
		return ControlMarker{}, fmt.Errorf("%w: control record key %x", ErrInvalidRecord, rec.Key)
	}
	var m ControlMarker
	switch binary.BigEndian.Uint16(rec.Key[2:]) {
	case controlAbort:
	case controlCommit:
		m.Commit = true
	default:
		return ControlMarker{}, fmt.Errorf("%w: control record type %d is not a transaction marker", ErrInvalidRecord, binary.BigEndian.Uint16(rec.Key[2:]))
	}
	if len(rec.Value) < 6 {
		return ControlMarker{}, fmt.Errorf("%w: control record value of %d bytes", ErrInvalidRecord, len(rec.Value))
	}
	m.CoordinatorEpoch = int32(binary.BigEndian.Uint32(rec.Value[2:]))
	return m, nil
}
