package partition

import (
	"context"
	"runtime/pprof"

	"github.com/sediment-io/sediment/storage/internal/lockrank"
	"github.com/sediment-io/sediment/storage/wal"
)

// durableNotifier advances high watermarks as soon as the WAL fsync covers
// new batches, whoever (if anyone) waits for them: acks=0 producers, and
// fetches pipelined on the connection of a producer, see their data as soon
// as it is durable rather than at the next upload.
type durableNotifier struct {
	l    *Log
	kick chan struct{} // one slot: an fsync happened

	mu    lockrank.Mutex[lockrank.Notifier] // guards dirty
	dirty map[*Partition]struct{}
}

func newDurableNotifier(l *Log) *durableNotifier {
	return &durableNotifier{l: l, kick: make(chan struct{}, 1), dirty: map[*Partition]struct{}{}}
}

// note records that p is about to append a WAL batch. Called with p.mu held,
// before the WAL append, so that the fsync covering it finds p in the set.
func (d *durableNotifier) note(p *Partition) {
	d.mu.Lock()
	d.dirty[p] = struct{}{}
	d.mu.Unlock()
}

// synced is the WAL's OnSync hook: it never blocks the flusher.
func (d *durableNotifier) synced() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

func (d *durableNotifier) run(ctx context.Context) {
	pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("sediment", "durable-notifier")))
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.kick:
		}
		durable := d.l.wal.Durable()
		d.mu.Lock()
		parts := d.dirty
		d.dirty = map[*Partition]struct{}{}
		d.mu.Unlock()
		for p := range parts {
			if p.advanceDurable(durable) {
				d.note(p)
			}
		}
	}
}

// advanceDurable raises the high watermark over every batch whose WAL frame
// ends at or before durable, and reports whether batches remain beyond it.
func (p *Partition) advanceDurable(durable wal.Pos) (more bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.deleted {
		return false
	}
	end := p.hw
	for _, r := range p.refs[p.findLocked(p.hw):] {
		if !r.hasWAL || r.walEnd > durable {
			more = true
			break
		}
		end = r.end
	}
	p.advanceHWLocked(end)
	return more
}
