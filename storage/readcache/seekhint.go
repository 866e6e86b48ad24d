package readcache

import "github.com/sediment-io/sediment/storage/internal/lockrank"

// seekHints remembers, for object-store reads, where in a segment's region
// the batch starting at a given offset lies: the position right after the
// last batch a read returned. A sequential consumer's next fetch asks for
// exactly that offset, so it starts there instead of walking the batch
// headers from the start of the segment. Without it a catch-up reader of a
// 64 MiB compacted segment would walk (and, once the block cache has let
// them go, GET again) every block before its position on every fetch.
type seekHints struct {
	mu    lockrank.Mutex[lockrank.SeekHints] // guards hints
	hints map[seekKey]int64
}

// seekKey names the batch starting at offset in the region of one segment.
type seekKey struct {
	object string
	segPos int64
	offset int64
}

// maxSeekHints bounds the memory: a hint per partition being read from
// the object store, with room for several readers of each.
const maxSeekHints = 16384

func (s *seekHints) get(k seekKey) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pos, ok := s.hints[k]
	if ok {
		delete(s.hints, k) // a reader moves on; its next hint replaces this one
	}
	return pos, ok
}

// peek is get without using the hint up.
func (s *seekHints) peek(k seekKey) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hints[k]
}

func (s *seekHints) put(k seekKey, pos int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hints == nil {
		s.hints = make(map[seekKey]int64)
	}
	if len(s.hints) >= maxSeekHints {
		for old := range s.hints { // drop an arbitrary one: hints are only a shortcut
			delete(s.hints, old)
			break
		}
	}
	s.hints[k] = pos
}
