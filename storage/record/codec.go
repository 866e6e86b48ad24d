package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Record is one decoded record of a stored batch. Key and Value are nil
// when the record has a null key or value; they alias the decompressed
// batch, which nothing else holds.
type Record struct {
	Offset    int64
	Timestamp int64 // milliseconds since the epoch
	Key       []byte
	Value     []byte
	Headers   []Header
}

// Header is one header of a record.
type Header struct {
	Key   string
	Value []byte
}

// Decode decompresses one stored batch (any codec the broker
// accepts) and calls fn with each record in order, stopping at fn's first
// error. It is for readers off the hot path (the table converter); it never
// reads outside raw.
func Decode(raw []byte, fn func(Record) error) error {
	if len(raw) < BatchHeaderLen {
		return fmt.Errorf("%w: %d bytes is shorter than a batch header", ErrCorruptBatch, len(raw))
	}
	b := ReadHeader(raw)
	base := BaseOffset(raw)
	recs, err := decompress(b.Codec(), raw[BatchHeaderLen:])
	if err != nil {
		return fmt.Errorf("record: decompress batch at %d: %w", base, err)
	}
	for i := int32(0); i < b.NumRecords; i++ {
		r, n, err := decodeRecord(recs)
		if err != nil {
			return fmt.Errorf("%w: batch at %d record %d: %v", ErrCorruptBatch, base, i, err)
		}
		r.Offset += base
		r.Timestamp += b.FirstTimestamp
		if b.Attributes&attrLogAppendTime != 0 {
			r.Timestamp = b.MaxTimestamp
		}
		if err := fn(r); err != nil {
			return err
		}
		recs = recs[n:]
	}
	return nil
}

// recordReader consumes the fields of one record body.
type recordReader struct {
	buf []byte
	err error
}

func (r *recordReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.buf)
	if n <= 0 {
		r.err = errors.New("bad varint")
		return 0
	}
	r.buf = r.buf[n:]
	return v
}

// bytes reads a varint-length-prefixed field; -1 is null.
func (r *recordReader) bytes() []byte {
	n := r.varint()
	switch {
	case r.err != nil || n == -1:
		return nil
	case n < -1 || n > int64(len(r.buf)):
		r.err = fmt.Errorf("field length %d with %d bytes left", n, len(r.buf))
		return nil
	}
	out := r.buf[:n:n]
	r.buf = r.buf[n:]
	return out
}

// decodeRecord decodes the record at the start of buf with its offset and
// timestamp as deltas; n is the record's whole size.
func decodeRecord(buf []byte) (rec Record, n int, err error) {
	length, ln := binary.Varint(buf)
	if ln <= 0 || length < 1 || int64(len(buf)-ln) < length {
		return Record{}, 0, errors.New("bad record length")
	}
	r := recordReader{buf: buf[ln+1 : ln+int(length)]} // skip the attributes byte
	rec.Timestamp = r.varint()
	rec.Offset = r.varint()
	rec.Key = r.bytes()
	rec.Value = r.bytes()
	headers := r.varint()
	if r.err == nil && (headers < 0 || headers > int64(len(r.buf))) {
		return Record{}, 0, fmt.Errorf("bad header count %d", headers)
	}
	for range headers {
		k := r.bytes()
		rec.Headers = append(rec.Headers, Header{Key: string(k), Value: r.bytes()})
	}
	if r.err != nil {
		return Record{}, 0, r.err
	}
	return rec, ln + int(length), nil
}

// EncodeBatch builds one uncompressed v2 record batch of recs (offsets and
// timestamps taken as given relative to the first record) for a
// non-idempotent producer: what the broker itself appends (the table
// converter's dead-letter records).
func EncodeBatch(recs []Record) []byte {
	if len(recs) == 0 {
		return nil
	}
	first, maxTS := recs[0].Timestamp, recs[0].Timestamp
	var body []byte
	for i, r := range recs {
		maxTS = max(maxTS, r.Timestamp)
		body = appendRecord(body, int64(i), r.Timestamp-first, r)
	}
	b := make([]byte, BatchHeaderLen, BatchHeaderLen+len(body))
	binary.BigEndian.PutUint32(b[batchLengthOff:], uint32(BatchHeaderLen-12+len(body)))
	b[batchMagicOff] = 2
	binary.BigEndian.PutUint32(b[batchLastDelta:], uint32(len(recs)-1))
	binary.BigEndian.PutUint64(b[batchFirstTsOff:], uint64(first))
	binary.BigEndian.PutUint64(b[batchMaxTsOff:], uint64(maxTS))
	binary.BigEndian.PutUint64(b[batchPIDOff:], ^uint64(0)) // producer id -1
	binary.BigEndian.PutUint16(b[batchPEpochOff:], ^uint16(0))
	binary.BigEndian.PutUint32(b[batchSeqOff:], ^uint32(0))
	binary.BigEndian.PutUint32(b[batchCountOff:], uint32(len(recs)))
	b = append(b, body...)
	binary.BigEndian.PutUint32(b[batchCRCOff:], crc32.Checksum(b[batchAttrOff:], crc32c))
	return b
}

func appendRecord(dst []byte, offDelta, tsDelta int64, r Record) []byte {
	var body []byte
	body = append(body, 0) // attributes
	body = binary.AppendVarint(body, tsDelta)
	body = binary.AppendVarint(body, offDelta)
	body = appendNullableBytes(body, r.Key)
	body = appendNullableBytes(body, r.Value)
	body = binary.AppendVarint(body, int64(len(r.Headers)))
	for _, h := range r.Headers {
		body = appendNullableBytes(body, []byte(h.Key))
		body = appendNullableBytes(body, h.Value)
	}
	dst = binary.AppendVarint(dst, int64(len(body)))
	return append(dst, body...)
}

func appendNullableBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}
