// Package partition owns the live log of every partition: offset
// assignment, the high watermark, idempotent-producer state, the tail
// cache, the uploader that moves batches to the object store, and the read
// path that finds a batch wherever it lives. It is the glue between the WAL,
// the object store and metadata; it never sees the wire protocol. The record
// batch format is storage/record's, the format of the objects it writes
// storage/dataobject's, reading a segment's batches from the object store
// (block cache, streams, seek hints) storage/readcache's; compaction,
// retention and the index fold (storage/lifecycle) and deleting objects
// nothing references (garbage, orphans; storage/gc) are run by its
// maintainer. Folded index entries are read through storage/manifest.
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
//	          (the metadata index finds the segment; storage/readcache reads
//	          its region: ranged GETs through the block cache, or a stream).
//
// Idempotent-producer state lives in each Partition (the window of a
// producer's last batches, to answer retries with the original offset).
// Each upload commits, per partition, only the producers that wrote in the
// segment (a delta); maintenance folds the deltas into a snapshot and
// forgets producers idle past producer.id.expiration.ms on the broker's
// clock (Options.Now); loading a partition reads the snapshot and the
// deltas after it. The producer state includes the transactions (txn.go):
// each producer's open transaction and the aborted ones, from which a
// partition keeps its last stable offset and aborted index.
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
// # Ownership
//
// In a cluster (Options.Ownership set) each partition has one fenced owner.
// The log starts owning none: Acquire (after the cluster wrote the own key)
// reloads a partition from metadata and takes appends; Release refuses
// appends, waits for the batches taken to commit and lets go; Drop lets go
// at once. A partition not owned answers ErrNotLeader, and so does every
// partition once Ownership.Valid says the lease deadline passed, including
// a Wait whose batch became durable only then. The uploader puts only owned
// partitions in an object and commits each segment under its owner key's
// fence; a failed fence (metadata.NotOwnerError) drops the partitions it
// names. Dropping under --durability object fails the waiting producers
// (nothing of theirs was acknowledged); under --durability wal the batches
// stay, acknowledged, in memory and in the WAL, and commit at the next
// Acquire, or are reset if another owner wrote the partition meanwhile.
// Retention, compaction, the index fold and the producer fold run only on owned
// partitions, fenced; the bucket-wide steps (deleted topics, garbage,
// orphans) only where Ownership.Sweeps. A partition not owned is still
// read for consumers (ReadReplica, KIP-392): from the bucket only, below
// the committed end read from metadata, never from its in-memory batches.
//
// # Locks
//
// Every mutex below has a rank (storage/internal/lockrank); a goroutine
// takes them in increasing rank only, and `go test -tags lockrank` panics
// on any other order. Four locks sit outside the ranks, each taken only
// with none of the others held: Log.topicsMu (changes of the topic set:
// create, delete, SyncTopics; held across their metadata I/O),
// uploader.step (whoever moves the upload pipeline on, and Acquire; it
// then takes the ranked locks; Drop only tries it), lifecycle.Compactor's
// mu (one compaction pass at a time) and lifecycle.Folder's mu (one fold
// pass at a time). manifest.Cache's mu is a leaf: held for map updates
// only, never across I/O or another lock. Outermost first:
//
//	Log.appendGate       (RW) shared by an append from its WAL append to
//	                     its partition marked dirty; exclusive for the
//	                     uploader's cut (take)
//	Log.mu               (RW) topics and byID; never held across I/O nor
//	                     while taking a partition lock (the broker configs
//	                     are config.Dynamic's, which readers never wait on)
//	Partition.mu         one partition's offsets, refs, producers, waiters
//	durableNotifier.mu   the partitions with WAL frames not yet durable
//	wal.WAL.releaseMu    serializes Release
//	wal.WAL.mu           the WAL's positions and pending buffer
//	uploader.mu          dirty partitions, pending bytes, room, drops
//	tailCache.mu         the FIFO of cached batches
//	readcache's locks    blockCache.mu, streamTable.mu, seekHints.mu
//	                     (storage/readcache/doc.go, with their one edge)
//
// The edges taken today, each read in the code:
//
//	appendGate  -> Partition.mu           Append
//	appendGate  -> wal.mu, uploader.mu    uploader.take (the cut)
//	Partition.mu -> durableNotifier.mu    appendLocked (note)
//	Partition.mu -> wal.mu                appendLocked (wal.Append)
//	Partition.mu -> uploader.mu           appendLocked, replayBatch (markDirty)
//	Partition.mu -> tailCache.mu          appendLocked (push)
//	wal.releaseMu -> wal.mu               wal.Release
//
// The rest are leaves, and a read calls the read cache holding none of
// these. So is replicaView.mu (replica.go), outside the ranks: it is taken
// with no other lock held and held across no I/O. No lock of this package is held across object-store I/O; a
// partition's lock is held across metadata I/O only by BumpLeaderEpoch, so
// that no append lands between the epoch's start offset and its write (a
// bump is rare: a change of owner). Callbacks run without the caller's
// lock: the WAL's OnSync (the flusher holds no WAL lock then), and
// tailCache.push returns its victims for the appender to evict once it let
// go of its partition (evict takes the victim's Partition.mu, so two
// partition locks are never held at once). The WAL's MemFS (tests) takes its own lock
// inside file operations, which the WAL runs outside wal.mu.
package partition
