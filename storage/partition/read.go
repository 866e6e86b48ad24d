package partition

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/readcache"
	"github.com/sediment-io/sediment/storage/wal"
)

// loadUploadData fills up.data with the bytes of every ref: from the tail
// cache when still there, else from the WAL.
func (l *Log) loadUploadData(up *upload) error {
	up.data = make([][][]byte, len(up.refs))
	for i, refs := range up.refs {
		up.data[i] = make([][]byte, len(refs))
		for j, r := range refs {
			data, err := l.refData(r)
			if err != nil {
				return err
			}
			up.data[i][j] = data
		}
	}
	return nil
}

// refData returns a batch's bytes from the cache or, once evicted, the WAL.
func (l *Log) refData(r *batchRef) ([]byte, error) {
	r.part.mu.Lock()
	data, pos, hasWAL := r.data, r.walPos, r.hasWAL
	r.part.mu.Unlock()
	if data != nil {
		return data, nil
	}
	if !hasWAL {
		return nil, fmt.Errorf("partition: batch at offset %d is neither cached nor in the WAL", r.base)
	}
	return l.readWALBatch(pos)
}

func (l *Log) readWALBatch(pos wal.Pos) ([]byte, error) {
	typ, payload, err := l.wal.ReadAt(pos)
	if err != nil {
		return nil, fmt.Errorf("partition: read WAL at %d: %w", pos, err)
	}
	if typ != walBatch {
		return nil, fmt.Errorf("partition: WAL record at %d has type %d, want a batch", pos, typ)
	}
	_, _, raw, err := decodeWALBatch(payload)
	return raw, err
}

// FetchResult is what one partition returns to a fetch.
type FetchResult struct {
	// Batches are whole batches, the first containing the fetch offset,
	// each in one slice. A read from the object store leaves it nil and
	// fills Wire instead (see WholeBatches).
	Batches [][]byte
	// Wire holds a read from the object store: its batches back to back
	// in the slices they arrived in (stream chunks, or cached blocks),
	// where a batch may be split across two. A fetch writes them out as
	// they are.
	Wire           [][]byte
	Bytes          int
	HighWatermark  int64
	LogStartOffset int64
	// LastStableOffset ends what read_committed consumers may read: the
	// first offset of the oldest open transaction, else HighWatermark. A
	// replica read (ReadReplica) says HighWatermark; ReadReplicaCommitted
	// says it as the committed producer records give it.
	LastStableOffset int64
	// Aborted lists, for ReadCommitted and ReadReplicaCommitted, the
	// aborted transactions overlapping the returned batches, sorted by
	// FirstOffset.
	Aborted []AbortedTxn
	Source  string // "tail", "wal" or "object"; empty when nothing was read
	// next is the offset after the last returned batch.
	next int64
	// Replica says the partition was read by a broker that does not own
	// it, from the committed log (ReadReplica); HighWatermark is then the
	// committed end it knows.
	Replica bool
}

// WholeBatches returns the batches each in one slice: Batches, or Wire
// split at batch boundaries, copying only a batch that Wire splits.
func (r FetchResult) WholeBatches() ([][]byte, error) {
	if r.Wire == nil {
		return r.Batches, nil
	}
	return readcache.Batches(r.Wire)
}

// Read returns batches of p starting with the one that holds offset, up to
// maxBytes (the first batch is returned whole even when larger, as Kafka
// does when first is set, KIP-74). It never returns data at or past the high
// watermark. Reading at the high watermark returns no batches.
//
// Read returns batches and no error, or an error and no batches, never
// both. A read that fails after some batches returns those alone: the
// reader's next read continues after them. A read that finds its batches
// moved (uploaded and their WAL released, or compacted and their object
// collected) plans again, a bounded number of times.
func (l *Log) Read(ctx context.Context, p *Partition, offset int64, maxBytes int, first bool) (FetchResult, error) {
	return l.readIsolated(ctx, p, offset, maxBytes, first, false)
}

// readIsolated is Read, or ReadCommitted when committed is set.
func (l *Log) readIsolated(ctx context.Context, p *Partition, offset int64, maxBytes int, first, committed bool) (FetchResult, error) {
	if err := l.CheckLeader(p); err != nil {
		return FetchResult{}, err
	}
	for attempt := 1; ; attempt++ {
		res, err := l.read(ctx, p, offset, maxBytes, first, committed)
		if err == nil {
			return res, nil
		}
		if !retryableRead(err) || attempt == maxReadAttempts || ctx.Err() != nil {
			res.Batches, res.Wire, res.Bytes, res.Source = nil, nil, 0, ""
			return res, err
		}
	}
}

// maxReadAttempts bounds Read's planning: each retry follows a batch that
// moved down a tier (cache, WAL, object store), and compaction moving it
// once more is rare.
const maxReadAttempts = 4

func retryableRead(err error) bool {
	return objectstore.IsNotExist(err) || errors.Is(err, wal.ErrReleased) || errors.Is(err, os.ErrClosed)
}

func (l *Log) read(ctx context.Context, p *Partition, offset int64, maxBytes int, first, committed bool) (FetchResult, error) {
	plan, err := p.planRead(offset, committed)
	if err != nil {
		return plan.res, err
	}
	if plan.fromObjects {
		return l.readObjects(ctx, p, offset, plan, maxBytes, first)
	}
	return l.readRefs(plan, maxBytes, first)
}

// readPlan is what a read decided under the partition lock.
type readPlan struct {
	res         FetchResult
	refs        []*batchRef // candidate refs in order (from the tail)
	data        [][]byte    // their cached bytes (nil where evicted)
	fromObjects bool        // offset lies before the in-memory refs
	objectEnd   int64       // with fromObjects: read objects up to here
}

// planRead plans a read at offset up to the high watermark, or up to the
// last stable offset when committed is set.
func (p *Partition) planRead(offset int64, committed bool) (readPlan, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	lso := p.lsoLocked()
	plan := readPlan{res: FetchResult{HighWatermark: p.hw, LogStartOffset: p.logStart, LastStableOffset: lso, next: offset}}
	if p.deleted {
		return plan, ErrUnknownPartition
	}
	if offset < p.logStart || offset > p.hw {
		return plan, fmt.Errorf("%w: %d not in [%d, %d]", ErrOffsetOutOfRange, offset, p.logStart, p.hw)
	}
	limit := p.hw
	if committed {
		limit = lso
	}
	if offset >= limit {
		return plan, nil
	}
	i, before := p.beforeRefsLocked(offset)
	if before {
		plan.fromObjects = true
		plan.objectEnd = min(limit, p.committed)
		if i < len(p.refs) {
			plan.objectEnd = min(plan.objectEnd, p.refs[i].base)
		}
		return plan, nil
	}
	for _, r := range p.refs[i:] {
		if r.end > limit {
			break
		}
		plan.refs = append(plan.refs, r)
		plan.data = append(plan.data, r.data)
	}
	return plan, nil
}

// readsObjects reports whether a read at offset would be served from the
// object store: planRead's test, without planning the read.
func (p *Partition) readsObjects(offset int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.deleted || offset < p.logStart || offset >= p.hw {
		return false
	}
	_, before := p.beforeRefsLocked(offset)
	return before
}

// beforeRefsLocked returns the index of the in-memory ref holding offset
// or after it, and whether offset lies before the refs (in the objects).
func (p *Partition) beforeRefsLocked(offset int64) (int, bool) {
	i := p.findLocked(offset)
	// An uploaded batch no longer cached is read from the object store:
	// the uploader may release its WAL frame at any moment.
	for i < p.firstNew && p.refs[i].data == nil {
		i++
	}
	return i, i == len(p.refs) || p.refs[i].base > offset
}

// readRefs serves a read from the tail cache, falling back to the WAL for
// evicted batches.
func (l *Log) readRefs(plan readPlan, maxBytes int, first bool) (FetchResult, error) {
	res := plan.res
	res.Source = "tail"
	for i, r := range plan.refs {
		if res.Bytes+r.size > maxBytes && !(first && i == 0) {
			break
		}
		data := plan.data[i]
		if data == nil {
			var err error
			if data, err = l.refData(r); err != nil {
				if len(res.Batches) > 0 {
					break // a partial read; the next one starts here
				}
				return res, err
			}
			res.Source = "wal"
		}
		res.Batches = append(res.Batches, data)
		res.Bytes += len(data)
		res.next = r.end
	}
	if len(res.Batches) > 0 {
		l.m.fetchSource.WithLabelValues(res.Source).Inc()
	}
	return res, nil
}
