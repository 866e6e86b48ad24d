package metadata

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Producer lists (a segment's producer delta, a chunk of a producer
// snapshot) are stored in a compact binary form, not JSON: a partition may
// hold 100,000 producers, and these values are what every commit writes.
//
//	version byte (1) | count uvarint | count x producer
//	producer: id varint | epoch varint | last time ms varint | n uvarint | n x batch
//	batch:    first seq varint | last seq varint | base offset varint | last offset - base offset uvarint
//
// Version 2 appends transactional state to every producer, and is written
// only for a list where some producer has any (so that a broker without
// transactions writes what it always wrote):
//
//	producer: (version 1 fields) | coordinator epoch varint | open txn first offset varint (-1 none) |
//	          n uvarint | n x aborted txn
//	aborted txn: first offset varint | marker offset - first offset uvarint
//
// The format is frozen: a change takes a new version byte, and the decoder
// keeps reading every older one.
const (
	producerCodecV1 = 1
	producerCodecV2 = 2
)

// maxProducerValue bounds one stored producer list, far below etcd's 1.5 MiB
// request limit so that a delta or a snapshot chunk always fits one
// transaction along with the rest of a commit.
const maxProducerValue = 256 << 10

// errProducerCodec is wrapped by every decoding error.
var errProducerCodec = errors.New("metadata: bad producer list")

// encodeProducers appends list to dst.
func encodeProducers(dst []byte, list []ProducerState) []byte {
	version := byte(producerCodecV1)
	for i := range list {
		if list[i].transactional() {
			version = producerCodecV2
			break
		}
	}
	dst = append(dst, version)
	dst = binary.AppendUvarint(dst, uint64(len(list)))
	for _, st := range list {
		dst = binary.AppendVarint(dst, st.ID)
		dst = binary.AppendVarint(dst, int64(st.Epoch))
		dst = binary.AppendVarint(dst, st.LastTimeMs)
		dst = binary.AppendUvarint(dst, uint64(len(st.Batches)))
		for _, b := range st.Batches {
			dst = binary.AppendVarint(dst, int64(b.FirstSeq))
			dst = binary.AppendVarint(dst, int64(b.LastSeq))
			dst = binary.AppendVarint(dst, b.BaseOffset)
			dst = binary.AppendUvarint(dst, uint64(b.LastOffset-b.BaseOffset))
		}
		if version == producerCodecV1 {
			continue
		}
		dst = binary.AppendVarint(dst, int64(st.CoordEpoch))
		first := int64(-1)
		if st.TxnOpen {
			first = st.TxnFirst
		}
		dst = binary.AppendVarint(dst, first)
		dst = binary.AppendUvarint(dst, uint64(len(st.Aborted)))
		for _, a := range st.Aborted {
			dst = binary.AppendVarint(dst, a.First)
			dst = binary.AppendUvarint(dst, uint64(a.Last-a.First))
		}
	}
	return dst
}

// maxAbortedPerEntry bounds the aborted transactions one encoded producer
// carries (about 200 KiB), so that a producer that aborted many
// transactions still fits a value: its list is split over several entries
// of the same producer, which MergeProducer joins again when read.
const maxAbortedPerEntry = 8 << 10

// splitAborted returns list with every producer whose aborted list is
// longer than maxAborted written as several entries: the first with its
// state, the others with its epoch and transactional state and the rest
// of its aborted transactions, in order.
func splitAborted(list []ProducerState, maxAborted int) []ProducerState {
	split := false
	for i := range list {
		split = split || len(list[i].Aborted) > maxAborted
	}
	if !split {
		return list
	}
	out := make([]ProducerState, 0, len(list)+1)
	for _, st := range list {
		rest := st.Aborted
		st.Aborted = rest[:min(len(rest), maxAborted)]
		out = append(out, st)
		for rest = rest[len(st.Aborted):]; len(rest) > 0; rest = rest[len(st.Aborted):] {
			st = ProducerState{ID: st.ID, Epoch: st.Epoch, LastTimeMs: st.LastTimeMs, CoordEpoch: st.CoordEpoch,
				TxnOpen: st.TxnOpen, TxnFirst: st.TxnFirst, Aborted: rest[:min(len(rest), maxAborted)]}
			out = append(out, st)
		}
	}
	return out
}

// chunkProducers encodes list as values of at most about maxBytes each.
func chunkProducers(list []ProducerState, maxBytes int) [][]byte {
	list = splitAborted(list, maxAbortedPerEntry)
	var chunks [][]byte
	start := 0
	for start < len(list) {
		end, size := start, 0
		for end < len(list) && (end == start || size+producerSize(list[end]) <= maxBytes) {
			size += producerSize(list[end])
			end++
		}
		chunks = append(chunks, encodeProducers(nil, list[start:end]))
		start = end
	}
	return chunks
}

// producerSize is an upper bound of one producer's encoded size.
func producerSize(st ProducerState) int {
	return 5*binary.MaxVarintLen64 + 2 + len(st.Batches)*(2*binary.MaxVarintLen32+2*binary.MaxVarintLen64) +
		len(st.Aborted)*2*binary.MaxVarintLen64
}

// producerReader decodes one value, remembering the first error.
type producerReader struct {
	b   []byte
	err error
}

func (r *producerReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *producerReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *producerReader) fail() {
	if r.err == nil {
		r.err = fmt.Errorf("%w: truncated or malformed varint", errProducerCodec)
	}
	r.b = nil
}

// decodeProducers decodes a value written by encodeProducers. It never
// reads past b and never allocates more than b's size justifies.
func decodeProducers(b []byte) ([]ProducerState, error) {
	if len(b) == 0 || (b[0] != producerCodecV1 && b[0] != producerCodecV2) {
		return nil, fmt.Errorf("%w: unknown version", errProducerCodec)
	}
	version := b[0]
	r := &producerReader{b: b[1:]}
	n := r.uvarint()
	if n > uint64(len(r.b)) { // every producer takes at least 4 bytes
		return nil, fmt.Errorf("%w: %d producers in %d bytes", errProducerCodec, n, len(b))
	}
	list := make([]ProducerState, 0, n)
	for i := uint64(0); i < n && r.err == nil; i++ {
		st := ProducerState{ID: r.varint(), Epoch: int16(r.varint()), LastTimeMs: r.varint()}
		nb := r.uvarint()
		if nb > uint64(len(r.b)) {
			return nil, fmt.Errorf("%w: %d batches in %d bytes", errProducerCodec, nb, len(r.b))
		}
		st.Batches = make([]ProducerBatch, nb)
		for j := range st.Batches {
			pb := &st.Batches[j]
			pb.FirstSeq, pb.LastSeq = int32(r.varint()), int32(r.varint())
			pb.BaseOffset = r.varint()
			pb.LastOffset = pb.BaseOffset + int64(r.uvarint())
		}
		st.CoordEpoch = -1
		if version == producerCodecV2 {
			st.CoordEpoch = int32(r.varint())
			if first := r.varint(); first >= 0 {
				st.TxnOpen, st.TxnFirst = true, first
			}
			na := r.uvarint()
			if na > uint64(len(r.b)) {
				return nil, fmt.Errorf("%w: %d aborted transactions in %d bytes", errProducerCodec, na, len(r.b))
			}
			if na > 0 {
				st.Aborted = make([]TxnRange, na)
			}
			for j := range st.Aborted {
				a := &st.Aborted[j]
				a.First = r.varint()
				a.Last = a.First + int64(r.uvarint())
			}
		}
		list = append(list, st)
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: %d trailing bytes", errProducerCodec, len(r.b))
	}
	if r.err != nil {
		return nil, r.err
	}
	return list, nil
}
