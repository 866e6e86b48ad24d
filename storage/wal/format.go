package wal

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

// Pos is a logical byte offset across the whole log. It is monotonic and
// never reused; see the package doc for how it maps to file offsets.
type Pos uint64

// RecordType tags a frame for the caller. 0 is invalid; callers use 1..255.
type RecordType uint8

// MaxPayload is the largest payload Append accepts. Kafka requests are far
// smaller; the bound keeps every frame length representable and lets
// recovery reject absurd length fields.
const MaxPayload = 1 << 30

// Wire format constants. FROZEN: they define bytes on disk; see the package
// doc for how a new format version is introduced.
const (
	segmentMagic      = "SDWL"
	formatVersion     = 2 // the version written; see readableVersion
	formatVersionV1   = 1 // no flush commits: torn tails are guessed from their shape
	segmentHeaderSize = 16
	frameHeaderSize   = 9
	segmentExt        = ".wal"
	tmpExt            = ".tmp"
	segmentNameDigits = 20
)

// The flush commit (version 2): a frame of type 0 with a payload of
// commitPayloadSize bytes, written after each flush's fsync returned.
const (
	commitType        RecordType = 0
	commitPayloadSize            = 16
	commitFrameSize              = frameHeaderSize + commitPayloadSize
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// frameCRC is the CRC-32C of the type byte followed by the payload.
func frameCRC(typ RecordType, payload ...[]byte) uint32 {
	t := [1]byte{byte(typ)}
	crc := crc32.Update(0, castagnoli, t[:])
	for _, p := range payload {
		crc = crc32.Update(crc, castagnoli, p)
	}
	return crc
}

// frameSize is the number of bytes (and of logical positions) a frame with
// a payload of n bytes takes.
func frameSize(n int) Pos { return Pos(frameHeaderSize + n) }

// appendFrame appends one encoded frame of n payload bytes, given in parts,
// to dst.
func appendFrame(dst []byte, crc uint32, typ RecordType, n int, payload ...[]byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(n))
	dst = binary.BigEndian.AppendUint32(dst, crc)
	dst = append(dst, byte(typ))
	for _, p := range payload {
		dst = append(dst, p...)
	}
	return dst
}

// encodeFrame returns the bytes of one frame.
func encodeFrame(typ RecordType, payload []byte) []byte {
	buf := make([]byte, 0, frameHeaderSize+len(payload))
	return appendFrame(buf, frameCRC(typ, payload), typ, len(payload), payload)
}

// frameHeader is a decoded 9-byte frame header.
type frameHeader struct {
	length uint32
	crc    uint32
	typ    RecordType
}

// parseFrameHeader decodes b[:frameHeaderSize].
func parseFrameHeader(b []byte) frameHeader {
	return frameHeader{
		length: binary.BigEndian.Uint32(b[0:4]),
		crc:    binary.BigEndian.Uint32(b[4:8]),
		typ:    RecordType(b[8]),
	}
}

// isZero reports whether the header is nine zero bytes: never written.
func (h frameHeader) isZero() bool { return h == frameHeader{} }

// check returns why the frame with this header and payload is invalid, or
// "" when it is valid.
func (h frameHeader) check(payload []byte) string {
	switch {
	case len(payload) > MaxPayload:
		return "frame length exceeds MaxPayload"
	case h.typ == 0:
		return "record type 0"
	case frameCRC(h.typ, payload) != h.crc:
		return "bad CRC"
	}
	return ""
}

// appendSegmentHeader appends the 16-byte header of a segment starting at
// start, in the version written today.
func appendSegmentHeader(dst []byte, start Pos) []byte {
	return appendSegmentHeaderV(dst, start, formatVersion)
}

// appendSegmentHeaderV appends a header of the given format version.
func appendSegmentHeaderV(dst []byte, start Pos, version byte) []byte {
	dst = append(dst, segmentMagic...)
	dst = append(dst, version, 0, 0, 0)
	return binary.BigEndian.AppendUint64(dst, uint64(start))
}

// checkSegmentHeader returns why b is not the header of a segment starting
// at start, or "" when it is.
func checkSegmentHeader(b []byte, start Pos) string {
	switch {
	case len(b) < segmentHeaderSize:
		return fmt.Sprintf("short segment header (%d bytes)", len(b))
	case string(b[0:4]) != segmentMagic:
		return fmt.Sprintf("bad magic %q", b[0:4])
	case b[4] != formatVersion && b[4] != formatVersionV1:
		return fmt.Sprintf("unknown format version %d", b[4])
	case b[5] != 0 || b[6] != 0 || b[7] != 0:
		return "reserved header bytes are not zero"
	}
	if got := Pos(binary.BigEndian.Uint64(b[8:16])); got != start {
		return fmt.Sprintf("header start %d does not match file name start %d", got, start)
	}
	return ""
}

// segmentName is the file name of the segment whose first frame is at start.
func segmentName(start Pos) string {
	return fmt.Sprintf("%0*d%s", segmentNameDigits, uint64(start), segmentExt)
}

// parseSegmentName returns the start of the segment named name, or false
// when name is not a segment file name.
func parseSegmentName(name string) (Pos, bool) {
	digits, ok := strings.CutSuffix(name, segmentExt)
	if !ok || len(digits) != segmentNameDigits {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	return Pos(n), true
}
