// Package lockrank gives every mutex of the storage path a rank, so that
// the lock order written in storage/partition/doc.go (and, for the read
// cache's locks, storage/readcache/doc.go) is checked, not only stated. A goroutine takes locks in increasing rank: holding a lock, it
// may take only locks of a higher rank.
//
// Built without the lockrank tag, Mutex and RWMutex are sync.Mutex and
// sync.RWMutex under another name: same size, same code, no check. With
// `-tags lockrank` (make test runs the storage packages so), every Lock,
// RLock and TryLock records the lock in its goroutine's held set, and taking
// a lock of a rank lower than or equal to one the goroutine holds panics,
// naming both: the inversion is found by the first test that takes the two
// locks in the wrong order, not by the rare run that deadlocks.
//
// A lock's rank is its type parameter, one of the classes below, so the
// whole order is this one list.
package lockrank

// Rank is a lock's place in the order: lower ranks are taken first.
type Rank int

// The storage path's locks, outermost first.
const (
	rankNone Rank = iota
	// RankLogAppendGate is partition.Log.appendGate.
	RankLogAppendGate
	// RankLogTopics is partition.Log.mu.
	RankLogTopics
	// RankPartition is partition.Partition.mu.
	RankPartition
	// RankNotifier is partition.durableNotifier.mu.
	RankNotifier
	// RankWALRelease is wal.WAL.releaseMu.
	RankWALRelease
	// RankWAL is wal.WAL.mu.
	RankWAL
	// RankUploader is partition.uploader.mu.
	RankUploader
	// RankTailCache is partition.tailCache.mu.
	RankTailCache
	// RankBlockCache is readcache.blockCache.mu.
	RankBlockCache
	// RankStreams is readcache.streamTable.mu.
	RankStreams
	// RankSeekHints is readcache.seekHints.mu.
	RankSeekHints
	rankTest1 // for this package's tests
	rankTest2
)

var rankNames = [...]string{
	rankNone:          "none",
	RankLogAppendGate: "partition.Log.appendGate",
	RankLogTopics:     "partition.Log.mu",
	RankPartition:     "partition.Partition.mu",
	RankNotifier:      "partition.durableNotifier.mu",
	RankWALRelease:    "wal.WAL.releaseMu",
	RankWAL:           "wal.WAL.mu",
	RankUploader:      "partition.uploader.mu",
	RankTailCache:     "partition.tailCache.mu",
	RankBlockCache:    "readcache.blockCache.mu",
	RankStreams:       "readcache.streamTable.mu",
	RankSeekHints:     "readcache.seekHints.mu",
	rankTest1:         "lockrank.test1",
	rankTest2:         "lockrank.test2",
}

func (r Rank) String() string {
	if r >= 0 && int(r) < len(rankNames) {
		return rankNames[r]
	}
	return "rank(?)"
}

// Class is a lock class: the type parameter of Mutex and RWMutex that gives
// the lock its rank. The classes are the types below, one per rank.
type Class interface{ rank() Rank }

// The lock classes, one per rank above.
type (
	LogAppendGate struct{}
	LogTopics     struct{}
	Partition     struct{}
	Notifier      struct{}
	WALRelease    struct{}
	WAL           struct{}
	Uploader      struct{}
	TailCache     struct{}
	BlockCache    struct{}
	Streams       struct{}
	SeekHints     struct{}
	test1         struct{}
	test2         struct{}
)

func (LogAppendGate) rank() Rank { return RankLogAppendGate }
func (LogTopics) rank() Rank     { return RankLogTopics }
func (Partition) rank() Rank     { return RankPartition }
func (Notifier) rank() Rank      { return RankNotifier }
func (WALRelease) rank() Rank    { return RankWALRelease }
func (WAL) rank() Rank           { return RankWAL }
func (Uploader) rank() Rank      { return RankUploader }
func (TailCache) rank() Rank     { return RankTailCache }
func (BlockCache) rank() Rank    { return RankBlockCache }
func (Streams) rank() Rank       { return RankStreams }
func (SeekHints) rank() Rank     { return RankSeekHints }
func (test1) rank() Rank         { return rankTest1 }
func (test2) rank() Rank         { return rankTest2 }
