package partition

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/dataobject"
	"github.com/sediment-io/sediment/storage/wal"
)

// upload is one object being built: which refs of which partitions it holds.
type upload struct {
	parts []*Partition
	refs  [][]*batchRef
	// data holds every ref's bytes until build copies them into the object;
	// build then drops it, so an object in flight holds its batches once.
	data [][][]byte
	// producers is each partition's producer delta, taken from data by
	// build for the commit.
	producers [][]metadata.ProducerState
	// fences holds each partition's fence as it was when its batches were
	// taken (nil on one node); the commit carries them.
	fences []*metadata.Cond
	bytes  int64
	cut    wal.Pos
}

// cut takes the batches waiting into a new object, builds it and starts its
// PUT. It reports whether it started one; with nothing waiting it releases
// the WAL up to the cut instead. Called with step held.
func (u *uploader) cut(ctx context.Context) (bool, error) {
	up := u.take()
	u.lastCut = up.cut
	if len(up.parts) == 0 {
		return false, u.releaseWAL(ctx)
	}
	if err := u.l.loadUploadData(up); err != nil {
		u.untake(up)
		return false, err
	}
	f := u.build(up)
	u.setInFlight(f.key, true)
	u.queue = append(u.queue, f)
	u.inflight += up.bytes
	u.startPut(ctx, f)
	return true, nil
}

// take swaps out the dirty set under the append gate, so every WAL frame
// before the cut belongs to a partition in the set (or one already left
// dirty), and collects each partition's batches in no object yet.
func (u *uploader) take() *upload {
	u.l.appendGate.Lock()
	up := &upload{}
	if u.l.wal != nil {
		up.cut = u.l.wal.Head()
	}
	u.mu.Lock()
	dirty := u.dirty
	u.dirty = map[*Partition]struct{}{}
	u.mu.Unlock()
	u.l.appendGate.Unlock()

	parts := make([]*Partition, 0, len(dirty))
	for p := range dirty {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return lessPartition(parts[i], parts[j]) })
	limit := maxObjectBytes(u.l.opts.UploadBytes)
	batches := u.l.opts.MaxObjectBatches
	if batches <= 0 {
		batches = math.MaxInt
	}
	for _, p := range parts {
		if n := u.l.opts.MaxObjectPartitions; n > 0 && len(up.parts) == n {
			break // the rest stay dirty for the next object
		}
		if batches == 0 {
			break
		}
		refs, fence := p.takeRefs(limit-up.bytes, batches)
		if len(refs) == 0 {
			continue
		}
		batches -= len(refs)
		up.parts = append(up.parts, p)
		up.refs = append(up.refs, refs)
		up.fences = append(up.fences, fence)
		for _, r := range refs {
			up.bytes += int64(r.size)
		}
	}
	for _, p := range parts {
		if p.hasUnsent() {
			u.markAgain(p)
		}
	}
	return up
}

// untake gives an upload's batches back after it failed before its PUT.
func (u *uploader) untake(up *upload) {
	for i, p := range up.parts {
		p.mu.Lock()
		p.upSent = up.refs[i][0].base
		p.mu.Unlock()
		u.markAgain(p)
	}
}

// markAgain marks p dirty without adding to the pending bytes.
func (u *uploader) markAgain(p *Partition) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.dirty[p] = struct{}{}
}

// maxObjectBytes bounds one object (and the memory building it takes):
// twice the upload threshold, at least 16 MiB, so a backlog drains in
// several objects rather than one huge one.
func maxObjectBytes(uploadBytes int64) int64 { return max(2*uploadBytes, 16<<20) }

func lessPartition(a, b *Partition) bool {
	if a.topic.Name != b.topic.Name {
		return a.topic.Name < b.topic.Name
	}
	return a.index < b.index
}

// takeRefs returns the partition's batches in no object yet, at most budget
// bytes of them (but at least one) and at most maxBatches, and marks them sent, with the fence
// their commit carries. A partition this log does not own gives none: its
// batches (kept under wal durability) wait for its next ownership.
func (p *Partition) takeRefs(budget int64, maxBatches int) ([]*batchRef, *metadata.Cond) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.deleted || !p.owned {
		return nil, nil
	}
	var out []*batchRef
	var n int64
	for _, r := range p.refs[p.firstUnsentLocked():] {
		if len(out) > 0 && n+int64(r.size) > budget || len(out) == maxBatches {
			break
		}
		out = append(out, r)
		n += int64(r.size)
	}
	if len(out) > 0 {
		p.upSent = out[len(out)-1].end
	}
	return out, p.fence
}

// firstUnsentLocked is the index of the first ref in no object yet.
func (p *Partition) firstUnsentLocked() int {
	return p.firstNew + sort.Search(len(p.refs)-p.firstNew, func(i int) bool {
		return p.refs[p.firstNew+i].base >= p.upSent
	})
}

func (p *Partition) hasUnsent() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.deleted && p.firstUnsentLocked() < len(p.refs)
}

// build lays the upload out as one object with its footer.
func (u *uploader) build(up *upload) *flight {
	size := up.bytes + int64(len(up.parts))*dataobject.EntryLen + dataobject.TrailerLen
	var buf []byte
	if n := len(u.free); n > 0 {
		buf, u.free = u.free[n-1], u.free[:n-1]
	}
	if int64(cap(buf)) < size {
		buf = make([]byte, 0, size)
	}
	obj := buf[:0]
	entries := make([]dataobject.Entry, 0, len(up.parts))
	up.producers = make([][]metadata.ProducerState, len(up.parts))
	for i, p := range up.parts {
		refs := up.refs[i]
		e := dataobject.Entry{Topic: p.topic.ID, Partition: p.index, BaseOffset: refs[0].base,
			EndOffset: refs[len(refs)-1].end, Pos: int64(len(obj))}
		for j, r := range refs {
			obj = append(obj, up.data[i][j]...)
			e.MaxTimestamp = max(e.MaxTimestamp, r.maxTS)
		}
		e.Len = int64(len(obj)) - e.Pos
		entries = append(entries, e)
		up.producers[i] = segmentProducers(refs, up.data[i])
	}
	up.data = nil
	obj = dataobject.AppendFooter(obj, entries)
	return &flight{up: up, key: u.objectKey(), obj: obj, entries: entries, start: time.Now()}
}

func (u *uploader) objectKey() string {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	return fmt.Sprintf("data/%013d-%d-%s.obj", time.Now().UnixMilli(), u.l.opts.NodeID, hex.EncodeToString(rnd[:]))
}
