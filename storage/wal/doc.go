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
//	 magic  version      reserved (zero)
//
// The start Pos in the header must equal the one in the file name. Version 2
// is written; version 1 (no flush commits) is still read.
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
// payload. Callers' types are 1..255. Nine zero bytes mean "never written",
// which is what a zeroed, torn tail looks like.
//
// # Flush commit (version 2: a frame of type 0, 25 bytes)
//
//	 0              4              8    9                 17                25
//	+--------------+--------------+----+-----------------+-----------------+
//	| 16           | CRC-32C      | 0  | flush start Pos | own Pos         |
//	+--------------+--------------+----+-----------------+-----------------+
//
// Each flush (one group-commit write and fsync) is followed by a commit.
// The flusher reserves its position behind the flush's frames, so it takes
// logical space like any frame and positions handed out by Append never
// move; but it writes the commit only after the flush's fsync returned, and
// the next flush's fsync makes it durable. The own Pos must equal the
// position the commit is found at. Commits are never replayed, and a
// version 1 segment has none (type 0 is invalid there).
//
// # Recovery
//
// Open scans every segment in order and hands each valid frame to the replay
// callback. After a power cut the last flush may be torn anywhere: the
// kernel writes pages back in any order, so a hole can be followed by
// intact frames. A commit on disk proves that its flush's fsync returned,
// and a flush is written only after the previous one was fsynced, so every
// byte before a commit was acknowledged. Hence, in the last segment, damage
// (a bad or partial frame, zeros, a bad commit) with no valid commit
// anywhere after it is a torn tail, never acknowledged: it is truncated,
// the truncation is fsynced, and the file, offset and dropped byte count
// are logged once. Damage with a valid commit after it, damage in any
// other segment (each is fsynced before its successor is created), a bad
// segment header or a gap between segments is corruption of acknowledged
// data: Open fails with a *CorruptionError naming the file and offset,
// unless Options.Repair asks to cut the log there (Options.OnRepairDrop
// then sees the intact frames cut off).
//
// What a commit cannot prove is the last flush before a power cut (its
// commit was not yet durable) or a log whose every commit after the damage
// is damaged too: such damage reads as a torn tail. A version 1 segment has
// no commits, so there the old rule holds: only a partial or zeroed tail,
// or a bad final frame followed by nothing but zeros, is torn.
//
// # Frozen wire format and migration
//
// The magic, the version byte, the header and frame layouts, the CRC
// polynomial and the file naming are frozen: segments written by one
// release must be readable by the next. A change of format gets a new
// version number in the segment header. A release that introduces version
// N+1 reads segments of version N and N+1 and writes only N+1 into segments
// it creates; the old segments drain away as the uploader releases them, so
// no rewrite is ever needed. Open never appends to an older segment: when
// the last segment is of an older version, it starts a new one. Going back to a release that knows only version
// N is possible only once no version N+1 segment is left (Open rejects an
// unknown version as a bad segment header).
package wal
