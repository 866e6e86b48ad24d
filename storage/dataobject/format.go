// Package dataobject is the format of the objects the broker writes to the
// object store: record batches grouped by partition, and a footer that
// indexes them. It only encodes and decodes; storage/partition's uploader
// and storage/lifecycle's compaction write the objects, and reads find
// their regions through the metadata index.
package dataobject

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/sediment-io/sediment/metadata"
)

// Format, version 1 (frozen: readers of every later version must
// still read it). One object holds the new batches of many partitions, each
// partition's batches contiguous and verbatim, followed by an index footer so
// the object describes itself without metadata. The broker reads its
// objects through the metadata index only (fetch, compaction, orphan
// collection, recovery); ParseFooter is what a reader of the footer uses.
//
//	+------------------------------------------------------------+
//	| region 0: record batches of one partition, verbatim        |
//	| region 1 ...                                               |
//	+------------------------------------------------------------+
//	| entry 0 .. entry N-1, 60 bytes each, big-endian:           |
//	|   topic id [16] | partition i32 | base offset i64 |        |
//	|   end offset i64 | pos u64 | len u64 | max timestamp i64   |
//	+------------------------------------------------------------+
//	| trailer, 16 bytes: N u32 | CRC-32C of the entries u32 |    |
//	|   magic "SDOB" | version u8 (1) | 3 zero bytes             |
//	+------------------------------------------------------------+
//
// A new version would change the trailer's version byte; a reader picks the
// entry layout by that byte.
const (
	// EntryLen and TrailerLen are the sizes of one footer entry and of the
	// trailer: an object of n entries is its data and EntryLen*n+TrailerLen
	// bytes more.
	EntryLen   = 60
	TrailerLen = 16
	objMagic   = "SDOB"
	objVersion = 1
)

// crc32c checksums an object's index and footer.
var crc32c = crc32.MakeTable(crc32.Castagnoli)

// ErrMalformed means an object's footer is malformed.
var ErrMalformed = errors.New("dataobject: malformed data object")

// Entry is one partition's region in a data object.
type Entry struct {
	Topic        metadata.TopicID
	Partition    int32
	BaseOffset   int64
	EndOffset    int64
	Pos          int64
	Len          int64
	MaxTimestamp int64
}

// AppendFooter appends the index footer for entries to obj.
func AppendFooter(obj []byte, entries []Entry) []byte {
	start := len(obj)
	for _, e := range entries {
		obj = append(obj, e.Topic[:]...)
		obj = binary.BigEndian.AppendUint32(obj, uint32(e.Partition))
		obj = binary.BigEndian.AppendUint64(obj, uint64(e.BaseOffset))
		obj = binary.BigEndian.AppendUint64(obj, uint64(e.EndOffset))
		obj = binary.BigEndian.AppendUint64(obj, uint64(e.Pos))
		obj = binary.BigEndian.AppendUint64(obj, uint64(e.Len))
		obj = binary.BigEndian.AppendUint64(obj, uint64(e.MaxTimestamp))
	}
	crc := crc32.Checksum(obj[start:], crc32c)
	obj = binary.BigEndian.AppendUint32(obj, uint32(len(entries)))
	obj = binary.BigEndian.AppendUint32(obj, crc)
	obj = append(obj, objMagic...)
	return append(obj, objVersion, 0, 0, 0)
}

// ParseFooter decodes and checks the footer of a whole object.
func ParseFooter(obj []byte) ([]Entry, error) {
	if len(obj) < TrailerLen {
		return nil, fmt.Errorf("%w: %d bytes", ErrMalformed, len(obj))
	}
	tr := obj[len(obj)-TrailerLen:]
	if string(tr[8:12]) != objMagic || tr[12] != objVersion || tr[13]|tr[14]|tr[15] != 0 {
		return nil, fmt.Errorf("%w: bad magic, version %d or reserved bytes", ErrMalformed, tr[12])
	}
	n := int64(binary.BigEndian.Uint32(tr))
	dataEnd := int64(len(obj)) - TrailerLen - n*EntryLen
	if dataEnd < 0 {
		return nil, fmt.Errorf("%w: %d entries do not fit in %d bytes", ErrMalformed, n, len(obj))
	}
	raw := obj[dataEnd : len(obj)-TrailerLen]
	if crc32.Checksum(raw, crc32c) != binary.BigEndian.Uint32(tr[4:]) {
		return nil, fmt.Errorf("%w: footer CRC mismatch", ErrMalformed)
	}
	entries := make([]Entry, n)
	for i := range entries {
		e, err := decodeEntry(raw[i*EntryLen:], dataEnd)
		if err != nil {
			return nil, fmt.Errorf("%w: entry %d: %v", ErrMalformed, i, err)
		}
		entries[i] = e
	}
	return entries, nil
}

func decodeEntry(b []byte, dataEnd int64) (Entry, error) {
	var e Entry
	copy(e.Topic[:], b)
	e.Partition = int32(binary.BigEndian.Uint32(b[16:]))
	e.BaseOffset = int64(binary.BigEndian.Uint64(b[20:]))
	e.EndOffset = int64(binary.BigEndian.Uint64(b[28:]))
	e.Pos = int64(binary.BigEndian.Uint64(b[36:]))
	e.Len = int64(binary.BigEndian.Uint64(b[44:]))
	e.MaxTimestamp = int64(binary.BigEndian.Uint64(b[52:]))
	switch {
	case e.Partition < 0 || e.BaseOffset < 0 || e.EndOffset <= e.BaseOffset:
		return e, fmt.Errorf("partition %d offsets [%d,%d)", e.Partition, e.BaseOffset, e.EndOffset)
	case e.Pos < 0 || e.Len <= 0 || e.Pos > dataEnd || e.Len > dataEnd-e.Pos:
		return e, fmt.Errorf("region [%d,+%d) outside %d data bytes", e.Pos, e.Len, dataEnd)
	}
	return e, nil
}
