// Package readcache serves reads of committed segments from the object
// store: it finds the batch holding an offset in a segment's region of an
// object and returns whole batches from there, through three things that
// share one memory budget:
//
//	block cache   fixed-size blocks of objects, least recently used out
//	              first, concurrent misses sharing one ranged GET, the next
//	              blocks of a region read ahead (blockcache.go); the path of
//	              the multi-partition upload objects, whose blocks many
//	              readers share
//	streams       one ranged GET to the end of a compacted segment's
//	              object, read ahead a few chunks at a time and kept between
//	              a sequential reader's fetches (stream.go)
//	seek hints    where the batch a reader asks for next lies in a region,
//	              so that it does not walk the batch headers from the
//	              region's start on every fetch (seekhint.go)
//
// It knows regions (an object, a position and a length), never the
// metadata index nor a partition: its owner (storage/partition) finds the
// segment, says whether it is a compacted one, and decides what to warm or
// prefetch next. Record batches are read as stored, never decoded.
//
// # Locks
//
// Its mutexes rank after the live log's (storage/internal/lockrank;
// storage/partition/doc.go has the whole order), and the read path holds
// no lock of the live log while it calls in here:
//
//	blockCache.mu    cached object blocks
//	streamTable.mu   open streams of compacted segments
//	seekHints.mu     seek hints of object reads
//
// The one edge: blockCache.mu -> streamTable.mu in blockCache.evictLocked
// (spare). streamTable.onOpen (blockCache.trim) runs without streamTable.mu.
// No lock is held across object-store I/O.
package readcache
