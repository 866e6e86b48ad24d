package partition

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/dataobject"
	"github.com/sediment-io/sediment/storage/record"
)

// Compaction: the uploader writes small objects holding many partitions'
// batches; catch-up readers would need a GET for every few of them. The
// compactor rewrites runs of small segments of one partition into one
// per-partition object (about CompactTargetBytes), indexed in chunks of
// CompactChunkBytes so a reader seeks within a chunk, and swaps them into
// the index with one compare-and-swap transaction: a fetch sees the old
// segments or the new ones, never a gap. The old objects become garbage.

// unit is one object's contiguous share of a partition's log: the segment
// an upload object holds, or every chunk of a compacted object.
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
// "data/<ms>-…" and compacted "seg/…/<base>-<ms>-…" keys); the zero time
// when there is none, which counts as old.
func objectTime(key string) time.Time {
	name := key[strings.LastIndexByte(key, '/')+1:]
	fields := strings.Split(name, "-")
	if strings.HasPrefix(key, compactPrefix) && len(fields) > 1 {
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
func (l *Log) compactRun(ctx context.Context, p *Partition, run []unit) (int64, error) {
	var old []metadata.Segment
	var size int64
	for _, u := range run {
		old = append(old, u.segs...)
		size += u.size
	}
	obj := make([]byte, 0, size+dataobject.TrailerLen+dataobject.EntryLen*(size/l.opts.CompactChunkBytes+2))
	for _, s := range old {
		data, err := l.store.GetRange(ctx, s.Object, s.Pos, s.Len)
		l.m.objectOps.WithLabelValues("get", resultLabel(err)).Inc()
		if err != nil {
			return 0, fmt.Errorf("read segment [%d,%d) of %s: %w", s.BaseOffset, s.EndOffset, s.Object, err)
		}
		if int64(len(data)) != s.Len {
			return 0, fmt.Errorf("object %s is shorter than its segment [%d,%d)", s.Object, s.BaseOffset, s.EndOffset)
		}
		obj = append(obj, data...)
	}
	entries, err := chunkEntries(obj, p, old, l.opts.CompactChunkBytes)
	if err != nil {
		return 0, err
	}
	key := compactedKey(p, old[0].BaseOffset)
	obj = dataobject.AppendFooter(obj, entries)
	if err := l.up.put(ctx, key, obj); err != nil {
		return 0, err
	}
	if err := l.meta.ReplaceSegments(ctx, old, segmentsOf(entries, key), l.opts.GCGrace); err != nil {
		l.discardObject(ctx, key)
		return int64(len(obj)), fmt.Errorf("swap in %s: %w", key, err)
	}
	l.m.compactedSegments.Add(float64(len(old)))
	l.m.compactedBytes.Add(float64(size))
	l.log.Debug("compacted segments", "topic", p.topic.Name, "partition", p.index,
		"segments", len(old), "bytes", size, "object", key)
	return int64(len(obj)), nil
}

// chunkEntries walks the concatenated batches, checks they cover exactly
// the old segments' offsets, and cuts them into index entries of about
// chunk bytes at batch boundaries.
func chunkEntries(data []byte, p *Partition, old []metadata.Segment, chunk int64) ([]dataobject.Entry, error) {
	var entries []dataobject.Entry
	next := old[0].BaseOffset
	pos := int64(0)
	err := record.SplitBatches(data, func(base, last int64, raw []byte) bool {
		if base != next {
			return false
		}
		n := len(entries)
		if n == 0 || entries[n-1].Len >= chunk {
			entries = append(entries, dataobject.Entry{Topic: p.topic.ID, Partition: p.index, BaseOffset: base, Pos: pos})
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

func compactedKey(p *Partition, base int64) string {
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	return fmt.Sprintf("%s%s/%d/%020d-%013d-%s.obj", compactPrefix, p.topic.ID, p.index, base,
		time.Now().UnixMilli(), hex.EncodeToString(rnd[:]))
}

// discardObject gets rid of an object nothing references: marked garbage
// (deleted by the next collection); if even that fails, the orphan sweep
// finds it later.
func (l *Log) discardObject(ctx context.Context, key string) {
	if err := l.meta.MarkGarbage(ctx, key, 0); err != nil {
		l.log.Warn("could not mark an unused object as garbage; the orphan sweep will delete it", "key", key, "err", err)
	}
}
