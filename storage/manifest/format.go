// Package manifest owns the manifest objects of the index fold: a
// manifest lists a run of one partition's old index entries, moved out of
// the metadata store into the bucket so that a partition's index keys stay
// bounded (see metadata/fold.go). It encodes and checks them, names them,
// and caches decoded ones for readers; it never writes the bucket or the
// index (storage/lifecycle's Folder does).
package manifest

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/sediment-io/sediment/metadata"
)

// A manifest object, frozen at version 1 (a new version gets a new magic
// or version byte; readers keep decoding the old ones):
//
//	+------+---+----------+-----------+-------+---------+-----+--------+
//	|"SDMF"| 1 | topic 16 | partition | count | entry … | ... | crc32c |
//	+------+---+----------+-----------+-------+---------+-----+--------+
//	  4      1     16        4 BE      uvarint              4 BE
//
//	entry: uvarint len(object) | object | uvarint base | uvarint end-base |
//	       uvarint pos | uvarint len | varint max timestamp
//
// The CRC-32C (Castagnoli) covers every byte before it. Entries are
// consecutive (each base is the previous end) and each covers at least
// one offset.

const (
	magic   = "SDMF"
	version = 1
	// headerLen is magic, version, topic id and partition.
	headerLen = 4 + 1 + 16 + 4
	crcLen    = 4
)

// Prefix starts the key of every manifest object:
// Prefix + "<topic id>/<partition>/<base offset>-<ms>-<random>.mf".
const Prefix = "manifest/"

// ErrCorrupt is returned for bytes that are not a well-formed manifest.
var ErrCorrupt = errors.New("manifest: corrupt")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Key returns a new manifest key for a run of id/p starting at base.
func Key(id metadata.TopicID, p int32, base int64) string {
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	return fmt.Sprintf("%s%s/%d/%020d-%013d-%s.mf", Prefix, id, p, base,
		time.Now().UnixMilli(), hex.EncodeToString(rnd[:]))
}

// Encode returns the manifest of segs: consecutive entries of one
// partition, none of them a manifest (the caller checks).
func Encode(segs []metadata.Segment) []byte {
	b := make([]byte, 0, headerLen+8+len(segs)*64+crcLen)
	b = append(b, magic...)
	b = append(b, version)
	b = append(b, segs[0].Topic[:]...)
	b = binary.BigEndian.AppendUint32(b, uint32(segs[0].Partition))
	b = binary.AppendUvarint(b, uint64(len(segs)))
	for _, s := range segs {
		b = binary.AppendUvarint(b, uint64(len(s.Object)))
		b = append(b, s.Object...)
		b = binary.AppendUvarint(b, uint64(s.BaseOffset))
		b = binary.AppendUvarint(b, uint64(s.EndOffset-s.BaseOffset))
		b = binary.AppendUvarint(b, uint64(s.Pos))
		b = binary.AppendUvarint(b, uint64(s.Len))
		b = binary.AppendVarint(b, s.MaxTimestamp)
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// Decode checks and decodes a manifest.
func Decode(b []byte) ([]metadata.Segment, error) {
	if len(b) < headerLen+1+crcLen || string(b[:4]) != magic {
		return nil, fmt.Errorf("%w: no manifest header", ErrCorrupt)
	}
	body := b[:len(b)-crcLen]
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(b[len(body):]) {
		return nil, fmt.Errorf("%w: bad checksum", ErrCorrupt)
	}
	if body[4] != version {
		return nil, fmt.Errorf("%w: unknown version %d", ErrCorrupt, body[4])
	}
	d := decoder{b: body[headerLen:]}
	var id metadata.TopicID
	copy(id[:], body[5:21])
	p := int32(binary.BigEndian.Uint32(body[21:25]))
	n := d.uvarint()
	if d.err != nil || n == 0 || n > uint64(len(d.b)) { // an entry takes several bytes
		return nil, fmt.Errorf("%w: bad entry count", ErrCorrupt)
	}
	segs := make([]metadata.Segment, 0, n)
	for range n {
		s := d.entry(id, p)
		if d.err != nil {
			return nil, d.err
		}
		if k := len(segs); k > 0 && s.BaseOffset != segs[k-1].EndOffset {
			return nil, fmt.Errorf("%w: entry at %d does not follow %d", ErrCorrupt, s.BaseOffset, segs[k-1].EndOffset)
		}
		segs = append(segs, s)
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the entries", ErrCorrupt, len(d.b))
	}
	return segs, nil
}

// decoder reads varints and keeps the first error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = fmt.Errorf("%w: truncated", ErrCorrupt)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = fmt.Errorf("%w: truncated", ErrCorrupt)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// offset reads a uvarint that must fit a non-negative int64.
func (d *decoder) offset() int64 {
	v := d.uvarint()
	if v > 1<<62 && d.err == nil {
		d.err = fmt.Errorf("%w: value %d out of range", ErrCorrupt, v)
	}
	return int64(v)
}

func (d *decoder) entry(id metadata.TopicID, p int32) metadata.Segment {
	n := d.uvarint()
	if d.err == nil && (n == 0 || n > uint64(len(d.b))) {
		d.err = fmt.Errorf("%w: bad object key length", ErrCorrupt)
	}
	if d.err != nil {
		return metadata.Segment{}
	}
	s := metadata.Segment{Topic: id, Partition: p, Object: string(d.b[:n])}
	d.b = d.b[n:]
	s.BaseOffset = d.offset()
	span := d.offset()
	s.EndOffset = s.BaseOffset + span
	s.Pos, s.Len = d.offset(), d.offset()
	s.MaxTimestamp = d.varint()
	if d.err == nil && span == 0 {
		d.err = fmt.Errorf("%w: empty entry at %d", ErrCorrupt, s.BaseOffset)
	}
	return s
}
