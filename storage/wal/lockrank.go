package wal

import "github.com/sediment-io/sediment/storage/internal/lockrank"

// The WAL's mutexes, ranked in the storage path's lock order (see
// storage/partition/doc.go): WAL.releaseMu, then WAL.mu.
type (
	walMutex   = lockrank.Mutex[lockrank.WAL]
	walRelease = lockrank.Mutex[lockrank.WALRelease]
)
