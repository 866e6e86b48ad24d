package partition

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"runtime/pprof"
	"sort"
	"time"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/internal/lockrank"
	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/wal"
)

// uploader moves appended batches to the object store: every upload
// interval, or once upload-bytes are waiting, it writes ONE object holding
// the new batches of every partition that has any, commits the object's
// index to metadata, and releases the WAL space behind it. The number of
// PUTs therefore never grows with the number of partitions.
type uploader struct {
	l    *Log
	kick chan struct{} // one slot: wakes run early
	// buf is the previous object's buffer, reused by the next: cycles run
	// one at a time (the uploader goroutine, or Close after it stopped).
	buf []byte

	mu      lockrank.Mutex[lockrank.Uploader] // guards dirty, pending and room
	dirty   map[*Partition]struct{}
	pending int64         // bytes appended and not yet uploaded
	room    chan struct{} // closed and replaced whenever pending shrinks
}

func newUploader(l *Log) *uploader {
	return &uploader{l: l, kick: make(chan struct{}, 1), dirty: map[*Partition]struct{}{}, room: make(chan struct{})}
}

// markDirty notes that p has n new bytes to upload. Called with p.mu held.
func (u *uploader) markDirty(p *Partition, n int64) {
	u.mu.Lock()
	u.dirty[p] = struct{}{}
	u.pending += n
	full := u.pending >= u.l.opts.UploadBytes
	u.mu.Unlock()
	if full {
		select {
		case u.kick <- struct{}{}:
		default:
		}
	}
}

// forget drops n bytes of a deleted partition from the pending count.
func (u *uploader) forget(n int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.shrinkLocked(n)
}

func (u *uploader) shrinkLocked(n int64) {
	u.pending -= n
	close(u.room)
	u.room = make(chan struct{})
}

// signalRoom wakes appends waiting for room (the WAL was released).
func (u *uploader) signalRoom() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.shrinkLocked(0)
}

// waitRoom blocks until ok() holds, re-checking whenever an upload makes
// room, until ctx ends. It kicks the uploader while it waits.
func (u *uploader) waitRoom(ctx context.Context, ok func() bool) error {
	for {
		u.mu.Lock()
		room := u.room
		u.mu.Unlock()
		if ok() {
			return nil
		}
		select {
		case u.kick <- struct{}{}:
		default:
		}
		select {
		case <-room:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Pending returns the bytes waiting for upload.
func (u *uploader) Pending() int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.pending
}

func (u *uploader) run(ctx context.Context) {
	pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("sediment", "uploader")))
	t := time.NewTicker(u.l.opts.UploadInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-u.kick:
		}
		for ctx.Err() == nil {
			more, err := u.cycle(ctx)
			if err != nil && ctx.Err() != nil {
				return // shutting down: Close's final flush uploads the rest
			}
			if err != nil {
				u.l.log.Error("upload failed; retrying", "err", err)
				sleepCtx(ctx, time.Second)
				break
			}
			if !more {
				break
			}
		}
	}
}

// flushAll uploads until nothing is pending, bounded by a deadline.
func (u *uploader) flushAll(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		more, err := u.cycle(ctx)
		if err != nil {
			return fmt.Errorf("partition: final upload: %w", err)
		}
		if !more && u.Pending() == 0 {
			return nil
		}
		if ctx.Err() != nil { // cycle does not look at ctx when nothing is dirty
			return fmt.Errorf("partition: final upload: %w with %d bytes pending", ctx.Err(), u.Pending())
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// upload is one object being built: which refs of which partitions it holds.
type upload struct {
	parts []*Partition
	refs  [][]*batchRef
	data  [][][]byte
	bytes int64
	cut   wal.Pos
}

// cycle uploads one object. It reports whether more data is waiting.
func (u *uploader) cycle(ctx context.Context) (more bool, err error) {
	up := u.take()
	if len(up.parts) == 0 {
		return false, u.releaseWAL(up.cut)
	}
	if err := u.l.loadUploadData(up); err != nil {
		u.requeue(up)
		return false, err
	}
	key, obj, entries := u.build(up)
	start := time.Now()
	if err := u.put(ctx, key, obj); err != nil {
		u.requeue(up)
		return false, err
	}
	if u.l.opts.AfterPut != nil {
		u.l.opts.AfterPut(key)
	}
	states, err := u.commit(ctx, up, key, entries)
	if err != nil {
		u.requeue(up)
		return false, err
	}
	u.finish(up, states)
	u.l.m.uploadSeconds.Observe(time.Since(start).Seconds())
	u.l.m.uploadedBytes.Add(float64(len(obj)))
	err = u.releaseWAL(up.cut)
	u.signalRoom()
	return u.Pending() >= u.l.opts.UploadBytes, err
}

// take swaps out the dirty set under the append gate, so every WAL frame
// before the cut belongs to a partition in the set (or one already left
// dirty), and collects each partition's batches not yet uploaded.
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
	for _, p := range parts {
		refs := p.newRefs(limit - up.bytes)
		if len(refs) == 0 {
			continue
		}
		up.parts = append(up.parts, p)
		up.refs = append(up.refs, refs)
		for _, r := range refs {
			up.bytes += int64(r.size)
		}
	}
	u.requeueRest(parts, up)
	return up
}

// requeueRest marks dirty again every partition that keeps batches not
// taken into this upload.
func (u *uploader) requeueRest(parts []*Partition, up *upload) {
	taken := map[*Partition]int{}
	for i, p := range up.parts {
		taken[p] = len(up.refs[i])
	}
	for _, p := range parts {
		if p.countNew() > taken[p] {
			u.mu.Lock()
			u.dirty[p] = struct{}{}
			u.mu.Unlock()
		}
	}
}

// requeue puts an upload's partitions back after a failure.
func (u *uploader) requeue(up *upload) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, p := range up.parts {
		u.dirty[p] = struct{}{}
	}
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

// newRefs returns the partition's batches not yet uploaded, at most budget
// bytes of them (but at least one).
func (p *Partition) newRefs(budget int64) []*batchRef {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.deleted {
		return nil
	}
	var out []*batchRef
	var n int64
	for _, r := range p.refs[p.firstNew:] {
		if len(out) > 0 && n+int64(r.size) > budget {
			break
		}
		out = append(out, r)
		n += int64(r.size)
	}
	return out
}

func (p *Partition) countNew() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.deleted {
		return 0
	}
	return len(p.refs) - p.firstNew
}

// build lays the upload out as one object with its footer.
func (u *uploader) build(up *upload) (string, []byte, []objectEntry) {
	size := up.bytes + int64(len(up.parts))*objEntryLen + objTrailerLen
	if int64(cap(u.buf)) < size {
		u.buf = make([]byte, 0, size)
	}
	obj := u.buf[:0]
	entries := make([]objectEntry, 0, len(up.parts))
	for i, p := range up.parts {
		refs := up.refs[i]
		e := objectEntry{Topic: p.topic.ID, Partition: p.index, BaseOffset: refs[0].base,
			EndOffset: refs[len(refs)-1].end, Pos: int64(len(obj))}
		for j, r := range refs {
			obj = append(obj, up.data[i][j]...)
			e.MaxTimestamp = max(e.MaxTimestamp, r.maxTS)
		}
		e.Len = int64(len(obj)) - e.Pos
		entries = append(entries, e)
	}
	obj = appendFooter(obj, entries)
	return u.objectKey(), obj, entries
}

func (u *uploader) objectKey() string {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	return fmt.Sprintf("data/%013d-%d-%s.obj", time.Now().UnixMilli(), u.l.opts.NodeID, hex.EncodeToString(rnd[:]))
}

// put writes the object, retrying with backoff until it lands or ctx ends.
func (u *uploader) put(ctx context.Context, key string, obj []byte) error {
	backoff := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		// Each attempt has its own deadline, so a store that hangs
		// cannot hold the uploader.
		actx, cancel := context.WithTimeout(ctx, u.putTimeout(len(obj)))
		_, err := u.l.store.Put(actx, key, obj, objectstore.Condition{IfAbsent: true})
		cancel()
		u.l.m.objectOps.WithLabelValues("put", resultLabel(err)).Inc()
		if err == nil || objectstore.IsPrecondition(err) && u.landed(ctx, key, obj) {
			return nil
		}
		if ctx.Err() != nil || attempt >= 5 {
			return fmt.Errorf("partition: put object %s (attempt %d): %w", key, attempt, err)
		}
		u.l.log.Warn("object put failed; retrying", "key", key, "attempt", attempt, "err", err)
		sleepCtx(ctx, backoff)
		backoff = min(2*backoff, 2*time.Second)
	}
}

func (u *uploader) putTimeout(size int) time.Duration {
	if u.l.opts.PutTimeout > 0 {
		return u.l.opts.PutTimeout
	}
	return 10*time.Second + time.Duration(size>>20)*time.Second
}

// landed reports whether key already holds obj: a retried PUT whose first
// attempt succeeded but whose answer was lost fails its If-None-Match.
// Rare, so it compares the bytes themselves (ETags differ by backend).
func (u *uploader) landed(ctx context.Context, key string, obj []byte) bool {
	got, err := u.l.store.Get(ctx, key)
	return err == nil && bytes.Equal(got, obj)
}

func resultLabel(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// commit records the object's segments in metadata, with each partition's
// producer state as of the segment's end.
func (u *uploader) commit(ctx context.Context, up *upload, key string, entries []objectEntry) ([]producers, error) {
	commits := make([]metadata.SegmentCommit, len(entries))
	states := make([]producers, len(entries))
	for i, e := range entries {
		states[i] = loadProducers(up.parts[i].upProducers.snapshot())
		for j := range up.refs[i] {
			b := readHeader(up.data[i][j])
			states[i].update(&b, up.refs[i][j].base)
		}
		commits[i] = metadata.SegmentCommit{
			Segment: metadata.Segment{Topic: e.Topic, Partition: e.Partition, BaseOffset: e.BaseOffset,
				EndOffset: e.EndOffset, Object: key, Pos: e.Pos, Len: e.Len, MaxTimestamp: e.MaxTimestamp},
			Producers: states[i].snapshot(),
		}
	}
	if _, err := u.l.meta.CommitSegments(ctx, commits); err != nil {
		return nil, fmt.Errorf("partition: commit object %s: %w", key, err)
	}
	return states, nil
}

// finish marks the uploaded batches, advances each partition's committed
// offset (and with it the high watermark) and updates the accounting.
func (u *uploader) finish(up *upload, states []producers) {
	var n int64
	for i, p := range up.parts {
		p.upProducers = states[i]
		if p.markUploaded(up.refs[i]) {
			continue // deleted meanwhile: markDeleted already forgot these bytes
		}
		for _, r := range up.refs[i] {
			n += int64(r.size)
		}
	}
	u.mu.Lock()
	u.shrinkLocked(n)
	u.mu.Unlock()
}

// markUploaded reports whether the partition had been deleted, in which
// case markDeleted counted refs as forgotten already.
func (p *Partition) markUploaded(refs []*batchRef) (deleted bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	deleted = p.deleted
	for _, r := range refs {
		r.uploaded = true
		if r.dropOnUpload {
			r.data = nil
		}
	}
	p.firstNew += len(refs)
	p.committed = refs[len(refs)-1].end
	p.advanceHWLocked(p.committed)
	p.trimLocked()
	return deleted
}

// releaseWAL frees WAL space before the first batch still waiting for upload
// (or before the cut when nothing waits).
func (u *uploader) releaseWAL(cut wal.Pos) error {
	if u.l.wal == nil {
		return nil
	}
	u.mu.Lock()
	dirty := make([]*Partition, 0, len(u.dirty))
	for p := range u.dirty {
		dirty = append(dirty, p)
	}
	u.mu.Unlock()
	pos := cut
	for _, p := range dirty {
		if first, ok := p.firstNewWALPos(); ok && first < pos {
			pos = first
		}
	}
	if err := u.l.wal.Release(pos); err != nil {
		return fmt.Errorf("partition: release WAL to %d: %w", pos, err)
	}
	return nil
}

func (p *Partition) firstNewWALPos() (wal.Pos, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.deleted || p.firstNew >= len(p.refs) || !p.refs[p.firstNew].hasWAL {
		return 0, false
	}
	return p.refs[p.firstNew].walPos, true
}
