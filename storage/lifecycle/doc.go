// Package lifecycle is what happens to a partition's committed segments
// after the upload: compaction rewrites runs of small segments into
// per-partition objects (compact.go), scheduled in bounded passes that
// reach every partition (compactsched.go), retention deletes the
// oldest segments that retention.ms, retention.bytes or the log start
// offset put out of the log (retention.go), and the index fold moves old
// runs of upload entries into manifest objects so that a partition's index
// keys stay bounded (fold.go).
//
// It sees partitions as the live log (storage/partition) hands them over
// for each pass, a Partition: names, retention configs and the log start
// offset, never their batches in memory. It changes the metadata index
// only by compare-and-swap transactions, so a fetch sees the old segments
// or the new ones, never a gap; the objects it leaves unreferenced are
// garbage for storage/gc. The owner's maintainer runs the passes.
package lifecycle

import "github.com/sediment-io/sediment/metadata"

// Partition is one partition as compaction and retention see it, made by
// the live log for each pass.
type Partition struct {
	Topic   string
	TopicID metadata.TopicID
	Index   int32
	// Retention is the topic's retention configs.
	Retention Retention
	// LogStart returns the partition's log start offset now.
	LogStart func() int64
	// RaiseLogStart moves the log start offset up to off, never down: the
	// segments below it are gone.
	RaiseLogStart func(off int64)
	// Fence, in a cluster, is the condition that holds while this broker
	// owns the partition; every metadata write of a pass carries it.
	Fence []metadata.Cond
}

// Retention is a topic's retention: retention.ms and retention.bytes (-1:
// unbounded), which apply only when Compact (cleanup.policy other than
// delete) is not set.
type Retention struct {
	Ms, Bytes int64
	Compact   bool
}
