package lifecycle

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/dataobject"
	"github.com/sediment-io/sediment/storage/manifest"
	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/record"
)

// Compaction: the uploader writes small objects holding many partitions'
// batches; catch-up readers would need a GET for every few of them. The
// compactor rewrites runs of small segments of one partition into one
// per-partition object (about TargetBytes), indexed in chunks of
// ChunkBytes so a reader seeks within a chunk, and swaps them into
// the index with one compare-and-swap transaction: a fetch sees the old
// segments or the new ones, never a gap. The old objects become garbage.

// CompactedPrefix starts the key of every compacted object:
// CompactedPrefix + "<topic id>/<partition>/<base offset>-<ms>-<random>.obj".
const CompactedPrefix = "seg/"

// Compactor runs compaction in bounded passes and keeps its cursors
// between them (compactsched.go). Set the fields before the first pass;
// every field but Page is required.
type Compactor struct {
	Store objectstore.Store
	Meta  *metadata.Store
	// Put writes a new object under key: the owner's PUT, which also
	// recognises an earlier attempt of its own that landed unseen.
	Put func(ctx context.Context, key string, obj []byte) error
	// TargetBytes is the size aimed for per output object; MinAge is how
	// old a run of small segments below half the target must be before it
	// is compacted anyway; ChunkBytes is how much one index entry of a
	// compacted object covers.
	TargetBytes, ChunkBytes int64
	MinAge                  time.Duration
	// BytesPerSec bounds how fast compaction writes, on average, with a
	// pass every Interval.
	BytesPerSec int64
	Interval    time.Duration
	// GCGrace is how long the objects a run replaced stay readable.
	GCGrace time.Duration
	// Page is how many index entries one visit reads (default 256).
	Page int
	// Expand returns the entries a manifest entry (see fold.go) lists: a
	// run holding one reads its data from them.
	Expand func(ctx context.Context, entry metadata.Segment) ([]metadata.Segment, error)
	// Got is called with the result of every GET; Segments and Bytes
	// count what runs rewrote.
	Got             func(err error)
	Segments, Bytes prometheus.Counter
	Logger          *slog.Logger

	// mu guards every field below. It is held for a whole pass, so passes
	// never interleave, and taken before any lock of the live log.
	mu sync.Mutex
	// last is the partition the previous pass visited last; the next pass
	// starts after it.
	last partRef
	// from holds, per partition (by topic ID), the offset its next visit
	// reads the index from: everything below is settled.
	from map[metadata.PartitionKey]int64
	// credit is the pass budget left over: negative after an overshoot.
	credit int64
}

// unit is one object's contiguous share of a partition's log: the segment
// an upload object holds, every chunk of a compacted object, or a manifest
// entry (its object is the manifest).
type unit struct {
	segs []metadata.Segment
	size int64
}

func (u unit) object() string { return u.segs[0].Object }

// end is the offset after the unit's last record.
func (u unit) end() int64 { return u.segs[len(u.segs)-1].EndOffset }

// groupUnits groups consecutive segments by object, skipping segments wholly
// below the log start (retention removes those).
func groupUnits(segs []metadata.Segment, logStart int64) []unit {
	var units []unit
	for _, s := range segs {
		if s.EndOffset <= logStart {
			continue
		}
		if n := len(units); n > 0 && units[n-1].object() == s.Object {
			units[n-1].segs = append(units[n-1].segs, s)
			units[n-1].size += s.Len
			continue
		}
		units = append(units, unit{segs: []metadata.Segment{s}, size: s.Len})
	}
	return units
}

// objectTime reads the creation time written into an object key (upload
// "data/<ms>-…", compacted "seg/…/<base>-<ms>-…" and manifest
// "manifest/…/<base>-<ms>-…" keys); the zero time
// when there is none, which counts as old.
func objectTime(key string) time.Time {
	name := key[strings.LastIndexByte(key, '/')+1:]
	fields := strings.Split(name, "-")
	if (strings.HasPrefix(key, CompactedPrefix) || strings.HasPrefix(key, manifest.Prefix)) && len(fields) > 1 {
		fields = fields[1:]
	}
	ms, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// compactRun rewrites one run into a new object and swaps it into the
// index. It returns the bytes written.
func (c *Compactor) compactRun(ctx context.Context, p Partition, run []unit) (int64, error) {
	var old []metadata.Segment
	var size int64
	for _, u := range run {
		old = append(old, u.segs...)
		size += u.size
	}
	old, reads, err := c.withFolded(ctx, old)
	if err != nil {
		return 0, err
	}
	obj := make([]byte, 0, size+dataobject.TrailerLen+dataobject.EntryLen*(size/c.ChunkBytes+2))
	for _, s := range reads {
		data, err := c.Store.GetRange(ctx, s.Object, s.Pos, s.Len)
		c.Got(err)
		if err != nil {
			return 0, fmt.Errorf("read segment [%d,%d) of %s: %w", s.BaseOffset, s.EndOffset, s.Object, err)
		}
		if int64(len(data)) != s.Len {
			return 0, fmt.Errorf("object %s is shorter than its segment [%d,%d)", s.Object, s.BaseOffset, s.EndOffset)
		}
		obj = append(obj, data...)
	}
	entries, err := chunkEntries(obj, p, old, c.ChunkBytes)
	if err != nil {
		return 0, err
	}
	key := compactedKey(p, old[0].BaseOffset)
	obj = dataobject.AppendFooter(obj, entries)
	if err := c.Put(ctx, key, obj); err != nil {
		return 0, err
	}
	if err := c.Meta.ReplaceSegments(ctx, old, segmentsOf(entries, key), c.GCGrace, p.Fence...); err != nil {
		c.discardObject(ctx, key)
		return int64(len(obj)), fmt.Errorf("swap in %s: %w", key, err)
	}
	c.Segments.Add(float64(len(old)))
	c.Bytes.Add(float64(size))
	c.Logger.Debug("compacted segments", "topic", p.Topic, "partition", p.Index,
		"segments", len(old), "bytes", size, "object", key)
	return int64(len(obj)), nil
}

// withFolded returns old with each manifest entry's Folded list filled
// in, and the entries whose data the run reads, in offset order.
func (c *Compactor) withFolded(ctx context.Context, old []metadata.Segment) (withFolded, data []metadata.Segment, err error) {
	withFolded = make([]metadata.Segment, len(old))
	for i, s := range old {
		withFolded[i] = s
		if !s.Manifest {
			data = append(data, s)
			continue
		}
		folded, err := c.Expand(ctx, s)
		if err != nil {
			return nil, nil, err
		}
		withFolded[i].Folded = folded
		data = append(data, folded...)
	}
	return withFolded, data, nil
}

// chunkEntries walks the concatenated batches, checks they cover exactly
// the old segments' offsets, and cuts them into index entries of about
// chunk bytes at batch boundaries.
func chunkEntries(data []byte, p Partition, old []metadata.Segment, chunk int64) ([]dataobject.Entry, error) {
	var entries []dataobject.Entry
	next := old[0].BaseOffset
	pos := int64(0)
	err := record.SplitBatches(data, func(base, last int64, raw []byte) bool {
		if base != next {
			return false
		}
		n := len(entries)
		if n == 0 || entries[n-1].Len >= chunk {
			entries = append(entries, dataobject.Entry{Topic: p.TopicID, Partition: p.Index, BaseOffset: base, Pos: pos})
			n++
		}
		e := &entries[n-1]
		e.EndOffset, e.Len = last+1, e.Len+int64(len(raw))
		e.MaxTimestamp = max(e.MaxTimestamp, record.ReadHeader(raw).MaxTimestamp)
		next, pos = last+1, pos+int64(len(raw))
		return true
	})
	if err == nil && (next != old[len(old)-1].EndOffset || pos != int64(len(data))) {
		err = fmt.Errorf("batches cover [%d,%d), segments [%d,%d)", old[0].BaseOffset, next, old[0].BaseOffset, old[len(old)-1].EndOffset)
	}
	if err != nil {
		return nil, fmt.Errorf("compaction input: %w", err)
	}
	return entries, nil
}

func segmentsOf(entries []dataobject.Entry, key string) []metadata.Segment {
	segs := make([]metadata.Segment, len(entries))
	for i, e := range entries {
		segs[i] = metadata.Segment{Topic: e.Topic, Partition: e.Partition, BaseOffset: e.BaseOffset,
			EndOffset: e.EndOffset, Object: key, Pos: e.Pos, Len: e.Len, MaxTimestamp: e.MaxTimestamp}
	}
	return segs
}

func compactedKey(p Partition, base int64) string {
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	return fmt.Sprintf("%s%s/%d/%020d-%013d-%s.obj", CompactedPrefix, p.TopicID, p.Index, base,
		time.Now().UnixMilli(), hex.EncodeToString(rnd[:]))
}

// discardObject gets rid of an object nothing references: marked garbage
// (deleted by the next collection); if even that fails, the orphan sweep
// finds it later.
func (c *Compactor) discardObject(ctx context.Context, key string) {
	if err := c.Meta.MarkGarbage(ctx, key, 0); err != nil {
		c.Logger.Warn("could not mark an unused object as garbage; the orphan sweep will delete it", "key", key, "err", err)
	}
}
