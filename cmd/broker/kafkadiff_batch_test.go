//go:build interop

package main

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// diffBatch describes one magic v2 record batch the script produces: the
// same bytes go to both brokers.
type diffBatch struct {
	timestamp  int64 // first record's; record i is timestamp+i
	producerID int64 // -1: not idempotent
	epoch      int16
	sequence   int32
	values     []string
	padding    int // bytes of 'x' appended to every value
}

// plainBatch is n records valued prefix-i, timestamps from ts.
func plainBatch(ts int64, values ...string) diffBatch {
	return diffBatch{timestamp: ts, producerID: -1, epoch: -1, sequence: -1, values: values}
}

// encode returns the batch's bytes with its length and CRC filled in.
func (d diffBatch) encode() []byte {
	var records []byte
	for i, v := range d.values {
		for range d.padding {
			v += "x"
		}
		records = appendRecord(records, int64(i), int32(i), v)
	}
	rb := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1, Magic: 2,
		LastOffsetDelta: int32(len(d.values) - 1),
		FirstTimestamp:  d.timestamp, MaxTimestamp: d.timestamp + int64(len(d.values)-1),
		ProducerID: d.producerID, ProducerEpoch: d.epoch, FirstSequence: d.sequence,
		NumRecords: int32(len(d.values)), Records: records,
	}
	b := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(b[8:12], uint32(len(b)-12))
	return fixCRC(b)
}

// fixCRC computes the batch's CRC (over everything after it) in place.
func fixCRC(b []byte) []byte {
	binary.BigEndian.PutUint32(b[17:21], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// appendRecord appends one record with key k-OFFSETDELTA and no headers.
func appendRecord(dst []byte, tsDelta int64, offDelta int32, value string) []byte {
	var r []byte
	r = append(r, 0) // attributes
	r = kbin.AppendVarlong(r, tsDelta)
	r = kbin.AppendVarint(r, offDelta)
	key := "k-" + value[:min(len(value), 8)]
	r = kbin.AppendVarint(r, int32(len(key)))
	r = append(r, key...)
	r = kbin.AppendVarint(r, int32(len(value)))
	r = append(r, value...)
	r = kbin.AppendVarint(r, 0) // headers
	dst = kbin.AppendVarint(dst, int32(len(r)))
	return append(dst, r...)
}

// badCRC is b with its CRC broken.
func badCRC(b []byte) []byte {
	b = append([]byte(nil), b...)
	b[20] ^= 0xff
	return b
}
