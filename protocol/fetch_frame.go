package protocol

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A fetch answer is mostly record batches, and they are written to the
// socket from where they already are (tail cache, object stream, block
// cache) instead of being copied into the encoded response: one writev
// sends the encoded fields and the batches in order. kmsg can only encode a
// response whole, with each partition's records inside it, so the answer is
// encoded with a 16-byte marker in place of each partition's records (a
// nonce drawn for this answer and the partition's number), and the encoded
// bytes are then cut at the markers and their length prefixes set to the
// real lengths.

// fetchRecords is one partition of a fetch answer and the record batches it
// answers with, in order.
type fetchRecords struct {
	part    *kmsg.FetchResponseTopicPartition
	batches [][]byte
}

// markerLen is the size of the stand-in for a partition's records.
const markerLen = 16

// encodeFetchFrame frames a fetch response whose records are in
// r.records. It returns the encoded fields (in buf, to be reused) and the
// whole frame as the buffers to write in order, which share buf and the
// batches.
func encodeFetchFrame(buf []byte, r *request) ([]byte, net.Buffers) {
	var nonce [8]byte
	binary.LittleEndian.PutUint64(nonce[:], rand.Uint64())
	markers := make([]byte, markerLen*len(r.records))
	for i, rec := range r.records {
		m := markers[markerLen*i : markerLen*(i+1)]
		copy(m, nonce[:])
		binary.BigEndian.PutUint64(m[8:], uint64(i))
		rec.part.RecordBatches = m
	}
	buf = appendResponse(buf, r)
	flexible := r.resp.IsFlexible() // records are compact bytes: uvarint(len+1)
	frame := make(net.Buffers, 0, 2+3*len(r.records))
	// The new length prefixes, one per partition; never grown, so the
	// slices of it in frame stay valid.
	prefixes := make([]byte, 0, binary.MaxVarintLen32*len(r.records))
	size, at := len(buf)-4, 0
	for i, rec := range r.records {
		m := markers[markerLen*i : markerLen*(i+1)]
		rec.part.RecordBatches = noRecords
		found := bytes.Index(buf[at:], m)
		if found < 0 {
			panic(fmt.Sprintf("fetch: records marker of partition %d not found in the encoded answer", i))
		}
		p := at + found
		n := 0
		for _, b := range rec.batches {
			n += len(b)
		}
		if flexible {
			if buf[p-1] != markerLen+1 {
				panic(fmt.Sprintf("fetch: records marker of partition %d has length prefix %d", i, buf[p-1]))
			}
			start := len(prefixes)
			prefixes = binary.AppendUvarint(prefixes, uint64(n)+1)
			frame = append(frame, buf[at:p-1], prefixes[start:])
			size += len(prefixes) - start - 1
		} else {
			if got := binary.BigEndian.Uint32(buf[p-4:]); got != markerLen {
				panic(fmt.Sprintf("fetch: records marker of partition %d has length prefix %d", i, got))
			}
			binary.BigEndian.PutUint32(buf[p-4:], uint32(n))
			frame = append(frame, buf[at:p])
		}
		frame = append(frame, rec.batches...)
		size += n - markerLen
		at = p + markerLen
	}
	frame = append(frame, buf[at:])
	binary.BigEndian.PutUint32(buf, uint32(size))
	return buf, frame
}
