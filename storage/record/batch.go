// Package record owns the Kafka v2 record batch: parsing and validating its
// header, the fields the broker rewrites (base offset, leader epoch,
// LogAppendTime), walking batches laid end to end, and decoding and encoding
// the records inside for readers off the hot path (ListOffsets by timestamp,
// the table converter). It holds no state and imports nothing of ours.
package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Record batch v2 layout (the Kafka wire and our storage format; frozen by
// the Kafka protocol):
//
//	off len field
//	  0   8 base offset          rewritten by the broker, not covered by CRC
//	  8   4 batch length         bytes after this field
//	 12   4 partition leader epoch  not covered by CRC
//	 16   1 magic (2)
//	 17   4 CRC-32C              over bytes 21..end
//	 21   2 attributes           bits 0-2 codec, 3 timestamp type, 4 transactional, 5 control
//	 23   4 last offset delta
//	 27   8 first timestamp
//	 35   8 max timestamp
//	 43   8 producer id
//	 51   2 producer epoch
//	 53   4 base sequence
//	 57   4 record count
//	 61     records
const (
	BatchHeaderLen  = 61
	batchLengthOff  = 8
	batchEpochOff   = 12
	batchMagicOff   = 16
	batchCRCOff     = 17
	batchAttrOff    = 21
	batchLastDelta  = 23
	batchFirstTsOff = 27
	batchMaxTsOff   = 35
	batchPIDOff     = 43
	batchPEpochOff  = 51
	batchSeqOff     = 53
	batchCountOff   = 57

	attrCodecMask     = 0x07
	attrLogAppendTime = 0x08
	attrTransactional = 0x10
	attrControl       = 0x20
)

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// Errors of batch validation; the protocol layer maps them to Kafka codes.
var (
	ErrCorruptBatch   = errors.New("record: corrupt record batch") // CORRUPT_MESSAGE
	ErrInvalidRecord  = errors.New("record: invalid record batch") // INVALID_RECORD
	ErrUnsupportedFmt = errors.New("record: record batch magic must be 2")
)

// Batch is a validated view of one v2 record batch's header.
type Batch struct {
	Raw             []byte
	Attributes      int16
	LastOffsetDelta int32
	FirstTimestamp  int64
	MaxTimestamp    int64
	ProducerID      int64
	ProducerEpoch   int16
	BaseSequence    int32
	NumRecords      int32
}

// Transactional reports whether the batch is part of a transaction
// (attribute bit 4).
func (b *Batch) Transactional() bool { return b.Attributes&attrTransactional != 0 }

// Control reports whether the batch is a control batch (attribute bit 5):
// a transaction marker, which only the broker writes.
func (b *Batch) Control() bool { return b.Attributes&attrControl != 0 }

// Codec is the compression codec (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd).
func (b *Batch) Codec() int { return int(b.Attributes & attrCodecMask) }

// ParseBatch validates that raw holds exactly one well-formed v2 record batch
// and returns its header. It never reads outside raw.
func ParseBatch(raw []byte) (Batch, error) {
	if len(raw) < BatchHeaderLen {
		return Batch{}, fmt.Errorf("%w: %d bytes is shorter than a batch header", ErrCorruptBatch, len(raw))
	}
	if raw[batchMagicOff] != 2 {
		return Batch{}, fmt.Errorf("%w: magic %d", ErrUnsupportedFmt, raw[batchMagicOff])
	}
	length := int64(int32(binary.BigEndian.Uint32(raw[batchLengthOff:])))
	if length+12 != int64(len(raw)) {
		if length+12 < int64(len(raw)) {
			return Batch{}, fmt.Errorf("%w: more than one batch (length %d, %d bytes)", ErrInvalidRecord, length, len(raw))
		}
		return Batch{}, fmt.Errorf("%w: batch length %d but %d bytes", ErrCorruptBatch, length, len(raw)-12)
	}
	if got, want := crc32.Checksum(raw[batchAttrOff:], crc32c), binary.BigEndian.Uint32(raw[batchCRCOff:]); got != want {
		return Batch{}, fmt.Errorf("%w: CRC %08x, header says %08x", ErrCorruptBatch, got, want)
	}
	b := ReadHeader(raw)
	if b.NumRecords <= 0 || b.LastOffsetDelta != b.NumRecords-1 {
		return Batch{}, fmt.Errorf("%w: %d records but last offset delta %d", ErrInvalidRecord, b.NumRecords, b.LastOffsetDelta)
	}
	if b.Codec() > 4 {
		return Batch{}, fmt.Errorf("%w: unknown compression codec %d", ErrInvalidRecord, b.Codec())
	}
	if b.Attributes&attrControl != 0 {
		return Batch{}, fmt.Errorf("%w: clients may not write control batches", ErrInvalidRecord)
	}
	if b.Transactional() && b.ProducerID < 0 {
		return Batch{}, fmt.Errorf("%w: transactional batch without a producer id", ErrInvalidRecord)
	}
	return b, nil
}

// ReadHeader decodes the header fields of a batch of at least
// BatchHeaderLen bytes without validating anything.
func ReadHeader(raw []byte) Batch {
	return Batch{
		Raw:             raw,
		Attributes:      int16(binary.BigEndian.Uint16(raw[batchAttrOff:])),
		LastOffsetDelta: int32(binary.BigEndian.Uint32(raw[batchLastDelta:])),
		FirstTimestamp:  int64(binary.BigEndian.Uint64(raw[batchFirstTsOff:])),
		MaxTimestamp:    int64(binary.BigEndian.Uint64(raw[batchMaxTsOff:])),
		ProducerID:      int64(binary.BigEndian.Uint64(raw[batchPIDOff:])),
		ProducerEpoch:   int16(binary.BigEndian.Uint16(raw[batchPEpochOff:])),
		BaseSequence:    int32(binary.BigEndian.Uint32(raw[batchSeqOff:])),
		NumRecords:      int32(binary.BigEndian.Uint32(raw[batchCountOff:])),
	}
}

// BaseOffset reads the base offset of a stored batch.
func BaseOffset(raw []byte) int64 { return int64(binary.BigEndian.Uint64(raw)) }

// BatchSize is the stored size of the batch whose header h starts, from its
// length field (which counts the bytes after itself).
func BatchSize(h []byte) int64 { return int64(int32(binary.BigEndian.Uint32(h[batchLengthOff:]))) + 12 }

// LastOffset is the offset of the last record of the batch whose
// header h starts.
func LastOffset(h []byte) int64 {
	return BaseOffset(h) + int64(int32(binary.BigEndian.Uint32(h[batchLastDelta:])))
}

// LeaderEpoch returns the partition leader epoch the batch was appended in.
func LeaderEpoch(raw []byte) int32 { return int32(binary.BigEndian.Uint32(raw[batchEpochOff:])) }

// SetBaseOffset rewrites the base offset and the partition leader epoch,
// neither covered by the CRC. As in Kafka, a batch carries the leader epoch
// it was appended in: consumers commit it with their offsets and validate
// it with OffsetForLeaderEpoch (KIP-320).
func SetBaseOffset(raw []byte, base int64, leaderEpoch int32) {
	binary.BigEndian.PutUint64(raw, uint64(base))
	binary.BigEndian.PutUint32(raw[batchEpochOff:], uint32(leaderEpoch))
}

// SetLogAppendTime marks the batch as LogAppendTime with max timestamp ts
// (as Kafka does for message.timestamp.type=LogAppendTime) and recomputes
// the CRC, which covers both fields.
func SetLogAppendTime(raw []byte, ts int64) {
	attr := binary.BigEndian.Uint16(raw[batchAttrOff:]) | attrLogAppendTime
	binary.BigEndian.PutUint16(raw[batchAttrOff:], attr)
	binary.BigEndian.PutUint64(raw[batchMaxTsOff:], uint64(ts))
	binary.BigEndian.PutUint32(raw[batchCRCOff:], crc32.Checksum(raw[batchAttrOff:], crc32c))
}

// SplitBatches walks stored batches laid end to end and calls fn with each
// one's base offset, last offset and bytes, until fn returns false. A
// truncated or malformed batch ends the walk with an error.
func SplitBatches(buf []byte, fn func(base, last int64, raw []byte) bool) error {
	for len(buf) > 0 {
		if len(buf) < BatchHeaderLen {
			return fmt.Errorf("%w: %d trailing bytes", ErrCorruptBatch, len(buf))
		}
		n := BatchSize(buf)
		if n < BatchHeaderLen || n > int64(len(buf)) {
			return fmt.Errorf("%w: batch of %d bytes in %d", ErrCorruptBatch, n, len(buf))
		}
		raw := buf[:n]
		if !fn(BaseOffset(raw), LastOffset(raw), raw) {
			return nil
		}
		buf = buf[n:]
	}
	return nil
}
