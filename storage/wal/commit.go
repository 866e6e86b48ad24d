package wal

import (
	"encoding/binary"
)

// A flush commit marks the end of one flush (one group-commit write and
// fsync). The flusher reserves it behind the flush's frames, writes the
// frames, fsyncs, and only then writes the commit, unsynced: the next
// flush's fsync makes it durable. A commit on disk therefore proves that the
// fsync of its flush returned, which is what tells damage to acknowledged
// data (before a commit) from a torn, never acknowledged tail (after the
// last one). Its payload is:
//
//	 0                 8                 16
//	+-----------------+-----------------+
//	| flush start Pos | own Pos         |
//	+-----------------+-----------------+
//
// The own Pos must equal the position the frame is found at, so that a
// commit copied elsewhere (say, inside a payload) is not mistaken for one.

// commitFrame is the encoded commit of the flush [start, at), itself at at.
func commitFrame(start, at Pos) []byte {
	p := make([]byte, 0, commitPayloadSize)
	p = binary.BigEndian.AppendUint64(p, uint64(start))
	p = binary.BigEndian.AppendUint64(p, uint64(at))
	return encodeFrame(commitType, p)
}

// isCommit reports whether the frame with header h and payload, found at
// position at, is a valid flush commit.
func isCommit(h frameHeader, payload []byte, at Pos) bool {
	if h.typ != commitType || h.length != commitPayloadSize || len(payload) != commitPayloadSize {
		return false
	}
	start := Pos(binary.BigEndian.Uint64(payload[0:8]))
	own := Pos(binary.BigEndian.Uint64(payload[8:16]))
	return own == at && start < at && frameCRC(commitType, payload) == h.crc
}

// commitAt reports whether b, which starts at position at, begins with a
// valid flush commit.
func commitAt(b []byte, at Pos) bool {
	if len(b) < commitFrameSize {
		return false
	}
	h := parseFrameHeader(b)
	return isCommit(h, b[frameHeaderSize:commitFrameSize], at)
}

// commitSearchChunk is how much of a segment findCommit reads at a time.
const commitSearchChunk = 1 << 20

// findCommit returns the file offset of the first valid flush commit in seg
// that starts after file offset from, or -1. It looks at every byte offset:
// past damage, frame boundaries are unknown.
func findCommit(seg *segment, from, size int64) (int64, error) {
	buf := make([]byte, min(commitSearchChunk+commitFrameSize, max(size-from, 0)))
	for off := from + 1; off+commitFrameSize <= size; off += commitSearchChunk {
		n := min(int64(len(buf)), size-off)
		b := buf[:n]
		if err := readFull(seg, b, off); err != nil {
			return -1, err
		}
		for i := 0; i+commitFrameSize <= len(b) && i < commitSearchChunk; i++ {
			if b[i+8] != byte(commitType) || b[i+3] != commitPayloadSize || b[i] != 0 {
				continue
			}
			if commitAt(b[i:], seg.start+Pos(off+int64(i)-segmentHeaderSize)) {
				return off + int64(i), nil
			}
		}
	}
	return -1, nil
}
