package wal

import (
	"encoding/binary"
	"sync"
)

// chunkSize is the unit of the in-memory frame buffers.
const chunkSize = 1 << 20

// chunkPool recycles emptied chunks, so that a steady stream of appends
// allocates (and zeroes) no new memory.
var chunkPool = sync.Pool{New: func() any {
	b := make([]byte, 0, chunkSize)
	return &b
}}

// frameBuffer holds encoded frames in fixed-size chunks. Growing it never
// copies what it already holds (a single growing slice would, on every
// doubling), and its memory follows what it holds rather than a doubled
// capacity. Frames may straddle chunks.
type frameBuffer struct {
	chunks []*[]byte // all full except the last
	n      int
}

func (b *frameBuffer) len() int { return b.n }

// write appends p.
func (b *frameBuffer) write(p []byte) {
	for len(p) > 0 {
		if len(b.chunks) == 0 || len(*b.chunks[len(b.chunks)-1]) == chunkSize {
			b.chunks = append(b.chunks, chunkPool.Get().(*[]byte))
		}
		last := b.chunks[len(b.chunks)-1]
		n := min(chunkSize-len(*last), len(p))
		*last = append(*last, p[:n]...)
		p, b.n = p[n:], b.n+n
	}
}

// appendFrame appends one frame of n payload bytes given in parts.
func (b *frameBuffer) appendFrame(crc uint32, typ RecordType, n int, payload ...[]byte) {
	var h [frameHeaderSize]byte
	binary.BigEndian.PutUint32(h[0:], uint32(n))
	binary.BigEndian.PutUint32(h[4:], crc)
	h[8] = byte(typ)
	b.write(h[:])
	for _, p := range payload {
		b.write(p)
	}
}

// readAt copies len(p) bytes from offset off into p and reports whether
// the buffer holds them all.
func (b *frameBuffer) readAt(p []byte, off int) bool {
	if off < 0 || off+len(p) > b.n {
		return false
	}
	for len(p) > 0 {
		c := *b.chunks[off/chunkSize]
		n := copy(p, c[off%chunkSize:])
		p, off = p[n:], off+n
	}
	return true
}

// each calls fn with the buffer's bytes in [from, to), chunk by chunk,
// stopping at the first error.
func (b *frameBuffer) each(from, to int, fn func([]byte) error) error {
	for from < to {
		c := *b.chunks[from/chunkSize]
		end := min(len(c), from%chunkSize+(to-from))
		if err := fn(c[from%chunkSize : end]); err != nil {
			return err
		}
		from += end - from%chunkSize
	}
	return nil
}

// release returns the chunks to the pool; the buffer is empty after.
func (b *frameBuffer) release() {
	for _, c := range b.chunks {
		*c = (*c)[:0]
		chunkPool.Put(c)
	}
	b.chunks, b.n = nil, 0
}
