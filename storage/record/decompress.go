package record

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Decompression is off the hot path: fetches return stored bytes. Only
// ListOffsets by timestamp looks inside batches, to find the exact record.

// maxDecompressed bounds what one batch may inflate to.
const maxDecompressed = 256 << 20

var zstdDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxDecompressed))

// xerialMagic starts Java's framed snappy (snappy-java's stream format).
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

func decompress(codec int, in []byte) ([]byte, error) {
	switch codec {
	case 0:
		return in, nil
	case 1:
		zr, err := gzip.NewReader(bytes.NewReader(in))
		if err != nil {
			return nil, err
		}
		return readLimited(zr)
	case 2:
		return unsnappy(in)
	case 3:
		return readLimited(lz4.NewReader(bytes.NewReader(in)))
	case 4:
		return zstdDecoder.DecodeAll(in, nil)
	}
	return nil, fmt.Errorf("%w: codec %d", ErrInvalidRecord, codec)
}

func readLimited(r io.Reader) ([]byte, error) {
	out, err := io.ReadAll(io.LimitReader(r, maxDecompressed+1))
	if len(out) > maxDecompressed {
		return nil, errors.New("record: batch inflates beyond 256 MiB")
	}
	return out, err
}

func unsnappy(in []byte) ([]byte, error) {
	if !bytes.HasPrefix(in, xerialMagic) {
		return s2.Decode(nil, in)
	}
	in = in[16:] // magic, version, compatible version
	var out []byte
	for len(in) > 0 {
		if len(in) < 4 {
			return nil, errors.New("record: truncated xerial snappy chunk")
		}
		n := int(binary.BigEndian.Uint32(in))
		if n < 0 || n > len(in)-4 {
			return nil, errors.New("record: bad xerial snappy chunk length")
		}
		chunk, err := s2.Decode(nil, in[4:4+n])
		if err != nil {
			return nil, err
		}
		out = append(out, chunk...)
		in = in[4+n:]
		if len(out) > maxDecompressed {
			return nil, errors.New("record: batch inflates beyond 256 MiB")
		}
	}
	return out, nil
}

// Timestamps calls fn with the offset and timestamp of every record of
// a stored batch, in order, until fn returns false.
func Timestamps(raw []byte, fn func(offset, ts int64) bool) error {
	b := ReadHeader(raw)
	base := BaseOffset(raw)
	if b.Attributes&attrLogAppendTime != 0 {
		for i := int64(0); i < int64(b.NumRecords); i++ {
			if !fn(base+i, b.MaxTimestamp) {
				return nil
			}
		}
		return nil
	}
	recs, err := decompress(b.Codec(), raw[BatchHeaderLen:])
	if err != nil {
		return fmt.Errorf("record: decompress batch at %d: %w", base, err)
	}
	for i := int32(0); i < b.NumRecords && len(recs) > 0; i++ {
		tsDelta, offDelta, n, err := recordHead(recs)
		if err != nil {
			return fmt.Errorf("record: batch at %d record %d: %w", base, i, err)
		}
		if !fn(base+offDelta, b.FirstTimestamp+tsDelta) {
			return nil
		}
		recs = recs[n:]
	}
	return nil
}

// recordHead decodes a record's length, timestamp delta and offset delta; n
// is the record's whole size.
func recordHead(buf []byte) (tsDelta, offDelta int64, n int, err error) {
	length, ln := binary.Varint(buf)
	if ln <= 0 || length < 0 || int64(len(buf)-ln) < length {
		return 0, 0, 0, errors.New("bad record length")
	}
	body := buf[ln : ln+int(length)]
	if len(body) < 1 {
		return 0, 0, 0, errors.New("empty record")
	}
	body = body[1:] // attributes
	tsDelta, tn := binary.Varint(body)
	if tn <= 0 {
		return 0, 0, 0, errors.New("bad timestamp delta")
	}
	offDelta, on := binary.Varint(body[tn:])
	if on <= 0 {
		return 0, 0, 0, errors.New("bad offset delta")
	}
	return tsDelta, offDelta, ln + int(length), nil
}
