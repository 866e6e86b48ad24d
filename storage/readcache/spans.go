package readcache

import (
	"fmt"

	"github.com/sediment-io/sediment/storage/record"
)

// spans is a run of bytes held in the slices it arrived in (an object
// stream's chunks), so that it can be read, cut and handed to a fetch
// without being joined into one slice first.
type spans [][]byte

// size is the number of bytes in s.
func (s spans) size() int64 {
	var n int64
	for _, b := range s {
		n += int64(len(b))
	}
	return n
}

// at returns the n bytes of s at off, which must lie inside s: a subslice
// when they are in one slice, a copy when they cross slices.
func (s spans) at(off, n int64) []byte {
	for i, b := range s {
		if off >= int64(len(b)) {
			off -= int64(len(b))
			continue
		}
		if off+n <= int64(len(b)) {
			return b[off : off+n : off+n]
		}
		out := make([]byte, 0, n)
		out = append(out, b[off:]...)
		for _, b := range s[i+1:] {
			out = append(out, b[:min(int64(len(b)), n-int64(len(out)))]...)
			if int64(len(out)) == n {
				break
			}
		}
		return out
	}
	return nil
}

// cut returns the bytes [from, to) of s, sharing its memory.
func (s spans) cut(from, to int64) spans {
	var out spans
	for _, b := range s {
		l := int64(len(b))
		if to <= 0 {
			break
		}
		if from < l {
			out = append(out, b[max(from, 0):min(to, l)])
		}
		from, to = from-l, to-l
	}
	return out
}

// batches splits s, whole batches laid end to end, into one slice per
// batch (a copy only for a batch that crosses s's slices).
func (s spans) batches() ([][]byte, error) {
	var out [][]byte
	size := s.size()
	for off := int64(0); off < size; {
		if size-off < record.BatchHeaderLen {
			return nil, fmt.Errorf("%w: %d trailing bytes", record.ErrCorruptBatch, size-off)
		}
		n := record.BatchSize(s.at(off, record.BatchHeaderLen))
		if n < record.BatchHeaderLen || n > size-off {
			return nil, fmt.Errorf("%w: batch of %d bytes in %d", record.ErrCorruptBatch, n, size-off)
		}
		out = append(out, s.at(off, n))
		off += n
	}
	return out, nil
}

// Batches splits wire, whole batches laid end to end in the slices of a
// Result's Data, into one slice per batch, copying only a batch that
// crosses two slices.
func Batches(wire [][]byte) ([][]byte, error) { return spans(wire).batches() }
