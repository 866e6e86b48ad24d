// Package wal is the broker's segmented write-ahead log with group commit.
//
// A produce request is appended here and acknowledged once the bytes are
// fsynced; later the uploader copies the data to object storage and calls
// Release so that old segments are deleted. The package owns framing, the
// flusher (the one goroutine that writes and fsyncs), crash recovery and
// truncation of torn tails. It never interprets payloads: a payload is bytes
// with a caller-chosen RecordType, and it never talks to object storage or
// metadata.
//
// # Positions
//
// A Pos is a logical byte offset across the whole log. It is monotonic and
// never reused, even after segments are deleted or a torn tail is cut. The
// logical position of the byte at file offset X of the segment that starts
// at S is S + (X - 16): segment headers take no logical space, so the first
// frame of a segment starts where the last frame of the previous one ended.
//
// # Files
//
// Segment files live in Options.Dir and are named by the Pos of their first
// frame, as 20 zero-padded decimal digits and ".wal":
//
//	00000000000000000000.wal   frames [0, 67108864)
//	00000000000067108864.wal   frames [67108864, ...)
//
// A new segment is written as "<name>.tmp" holding only the header, fsynced,
// renamed to "<name>" and then the directory is fsynced, so a segment either
// exists with a whole header or does not exist. Leftover ".tmp" files are
// removed by Open. The previous segment is fsynced before its successor is
// created, so every segment but the last is complete on disk.
//
// # Segment header (16 bytes, big-endian)
//
//	 0      4   5         8                       16
//	+------+---+---------+------------------------+
//	| SDWL | v | 0  0  0 | start Pos (uint64)     |
//	+------+---+---------+------------------------+
//	 magic  version (1)  reserved (zero)
//
// The start Pos in the header must equal the one in the file name.
//
// # Frame (9-byte header + payload, big-endian)
//
//	 0              4              8    9
//	+--------------+--------------+----+----------------------+
//	| length       | CRC-32C      |type| payload (length B)   |
//	+--------------+--------------+----+----------------------+
//	  uint32         uint32 over    uint8
//	  payload len    type+payload   1..255
//
// The CRC is CRC-32C (Castagnoli) over the type byte followed by the
// payload. Type 0 is never written: nine zero bytes mean "never written",
// which is what a zeroed, torn tail looks like.
//
// # Recovery
//
// Open scans every segment in order and hands each valid frame to the replay
// callback. The end of the last segment may hold a torn write: a partial
// frame header, a frame shorter than its length field, zero bytes, or a
// whole final frame whose CRC fails (optionally followed by zero bytes
// only). Such a tail was never acknowledged (its fsync did not return), so
// it is truncated, the truncation is fsynced and the dropped byte count is
// logged with the file name. Any other bad frame or header, or a gap between
// segments, is corruption of acknowledged data: Open fails with a
// *CorruptionError unless Options.Repair asks to cut the log there.
//
// # Frozen wire format and migration
//
// The magic, the version byte, the header and frame layouts, the CRC
// polynomial and the file naming are frozen: segments written by one
// release must be readable by the next. A change of format gets a new
// version number in the segment header. A release that introduces version
// N+1 reads segments of version N and N+1 and writes only N+1 into segments
// it creates; the old segments drain away as the uploader releases them, so
// no rewrite is ever needed. Going back to a release that knows only version
// N is possible only once no version N+1 segment is left (Open rejects an
// unknown version as a bad segment header).
package wal
