package partition

import (
	"fmt"
	"log/slog"
	"sort"

	"github.com/sediment-io/sediment/storage/record"
	"github.com/sediment-io/sediment/storage/wal"
)

// repairLoss names the records a WAL repair dropped. The WAL hands over
// the intact frames it cut off; whatever of them is past a partition's
// recovered end (and so not already in the object store) is lost, from
// that end to the last dropped batch's end.
type repairLoss struct {
	l      *Log
	frames int
	lost   map[*Partition]*lostRange
}

// lostRange is the offsets [from, to) a repair dropped from a partition.
type lostRange struct{ from, to int64 }

func newRepairLoss(l *Log) *repairLoss {
	return &repairLoss{l: l, lost: make(map[*Partition]*lostRange)}
}

// add is the wal.Options.OnRepairDrop callback. It runs during Open, after
// every frame before the damage was replayed, so p.next is the partition's
// recovered end.
func (r *repairLoss) add(pos wal.Pos, typ wal.RecordType, payload []byte) error {
	r.frames++
	if typ != walBatch {
		return nil
	}
	id, idx, raw, err := decodeWALBatch(payload)
	if err != nil || len(raw) < record.BatchHeaderLen {
		return nil // a dropped frame is reported as well as it can be
	}
	t, ok := r.l.byID[id]
	if !ok || t.Partition(idx) == nil {
		return nil
	}
	p := t.Partition(idx)
	end := record.BaseOffset(raw) + int64(record.ReadHeader(raw).NumRecords)
	if end <= p.next {
		return nil // in the object store already
	}
	if lr := r.lost[p]; lr != nil {
		lr.to = max(lr.to, end)
	} else {
		r.lost[p] = &lostRange{from: p.next, to: end}
	}
	return nil
}

// log writes one line naming the partitions and offset ranges lost, if a
// repair dropped anything.
func (r *repairLoss) log() {
	if r.frames == 0 {
		return
	}
	ranges := make([]string, 0, len(r.lost))
	for p, lr := range r.lost {
		ranges = append(ranges, fmt.Sprintf("%s/%d offsets %d..%d", p.topic.Name, p.index, lr.from, lr.to-1))
	}
	sort.Strings(ranges)
	r.l.log.Error("WAL REPAIR dropped acknowledged records",
		slog.Int("frames_dropped", r.frames), slog.Any("partitions", ranges))
}
