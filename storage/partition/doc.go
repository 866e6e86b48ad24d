// Package partition owns the live log of every partition: offset
// assignment, the high watermark, idempotent-producer state, the tail
// cache, the uploader that moves batches to the object store, and the read
// path that finds a batch wherever it lives. It is the glue between the WAL,
// the object store and metadata; it never sees the wire protocol.
//
// The life of a batch:
//
//	Append    validate (CRC, size, sequence), assign offsets by rewriting the
//	          base offset, append a WAL frame, cache the bytes   [partition lock]
//	Wait      --durability wal: the WAL fsync (group commit) covers the frame;
//	          --durability object: the uploader committed it. Either way the
//	          high watermark then passes it and fetches may return it.
//	upload    every --upload-interval or --upload-bytes: ONE object with the
//	          new batches of every partition, then one metadata transaction
//	          indexing all of them (each segment must start exactly where its
//	          partition's committed log ends), then the WAL is released.
//	          Up to --upload-concurrency objects are PUT at once; their
//	          commits apply in upload order (uploader.go).
//	Read      tail cache -> WAL (evicted, not yet uploaded) -> object store
//	          (metadata index, ranged GETs through the block cache).
//
// Idempotent-producer state lives in each Partition (the window of a
// producer's last batches, to answer retries with the original offset).
// Each upload commits, per partition, only the producers that wrote in the
// segment (a delta); maintenance folds the deltas into a snapshot and
// forgets producers idle past producer.id.expiration.ms on the broker's
// clock (Options.Now); loading a partition reads the snapshot and the
// deltas after it.
//
// Recovery replays the WAL: frames of batches already committed to metadata
// are skipped, the rest are re-queued for upload with their producer state,
// so nothing acknowledged is lost and nothing is uploaded twice.
//
// A failed WAL write or fsync fails the log for good (Fail, Failed): the
// page cache's state is unknown after it, so nothing is retried. Appends get
// ErrStorage, uploads stop, Close writes nothing more, and the owner
// restarts so that recovery decides what survived. The WAL calls Fail with
// its own lock held; Fail never blocks.
//
// Locks, in the order they may be taken: uploader.step (whoever moves the
// upload pipeline on), Log.appendGate (shared by appends,
// exclusive for the uploader's cut), Partition.mu, uploader.mu and
// tailCache.mu; Log.mu guards the topic maps and is never held while taking
// a partition lock.
package partition
