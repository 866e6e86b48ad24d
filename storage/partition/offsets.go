package partition

import (
	"context"
	"fmt"

	"github.com/sediment-io/sediment/storage/record"
)

// Special ListOffsets timestamps (Kafka's wire constants).
const (
	TimestampLatest        = -1
	TimestampEarliest      = -2
	TimestampMax           = -3 // KIP-734: the record with the largest timestamp
	TimestampEarliestLocal = -4 // KIP-405; everything here is "local" enough: earliest
)

// OffsetForTime answers ListOffsets for one partition: the offset and
// timestamp for a special timestamp, or the first offset whose record
// timestamp is at least ts. ok is false when no record qualifies (Kafka then
// answers offset -1, timestamp -1).
func (l *Log) OffsetForTime(ctx context.Context, p *Partition, ts int64) (offset, timestamp int64, ok bool, err error) {
	if err := l.CheckLeader(p); err != nil {
		return 0, 0, false, err
	}
	logStart, hw := p.Offsets()
	switch ts {
	case TimestampLatest:
		return hw, -1, true, nil
	case TimestampEarliest, TimestampEarliestLocal:
		return logStart, -1, true, nil
	case TimestampMax:
		return l.maxTimestamp(ctx, p, logStart, hw)
	}
	if ts < 0 {
		return 0, 0, false, fmt.Errorf("%w: timestamp %d", record.ErrInvalidRecord, ts)
	}
	return l.firstAtOrAfter(ctx, p, ts, logStart, hw)
}

// batchSpan is a batch (or a run of them) with its highest timestamp.
type batchSpan struct {
	base, end int64
	maxTS     int64
}

// spans lists, in offset order, the object segments (those a manifest
// entry folds one by one) then the in-memory batches of p between
// logStart and hw.
func (l *Log) spans(ctx context.Context, p *Partition, logStart, hw int64) ([]batchSpan, error) {
	segs, err := l.meta.Segments(ctx, p.topic.ID, p.index, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: index scan: %v", ErrStorage, err)
	}
	var out []batchSpan
	for _, s := range segs {
		if s.EndOffset <= logStart {
			continue
		}
		if !s.Manifest {
			out = append(out, batchSpan{s.BaseOffset, s.EndOffset, s.MaxTimestamp})
			continue
		}
		folded, err := l.manifests.Expand(ctx, s)
		if err != nil {
			return nil, fmt.Errorf("%w: index scan: %v", ErrStorage, err)
		}
		for _, f := range folded {
			if f.EndOffset > logStart {
				out = append(out, batchSpan{f.BaseOffset, f.EndOffset, f.MaxTimestamp})
			}
		}
	}
	p.mu.Lock()
	for _, r := range p.refs {
		if r.base >= p.committed && r.end <= hw {
			out = append(out, batchSpan{r.base, r.end, r.maxTS})
		}
	}
	p.mu.Unlock()
	return out, nil
}

func (l *Log) firstAtOrAfter(ctx context.Context, p *Partition, ts, logStart, hw int64) (int64, int64, bool, error) {
	spans, err := l.spans(ctx, p, logStart, hw)
	if err != nil {
		return 0, 0, false, err
	}
	for _, s := range spans {
		if s.maxTS < ts {
			continue
		}
		off, rts, ok, err := l.scanRecords(ctx, p, max(s.base, logStart), s.end, func(_, rts int64) bool { return rts >= ts })
		if err != nil || ok {
			return off, rts, ok, err
		}
	}
	return -1, -1, false, nil
}

func (l *Log) maxTimestamp(ctx context.Context, p *Partition, logStart, hw int64) (int64, int64, bool, error) {
	spans, err := l.spans(ctx, p, logStart, hw)
	if err != nil || len(spans) == 0 {
		return -1, -1, false, err
	}
	best := spans[0]
	for _, s := range spans[1:] {
		if s.maxTS > best.maxTS {
			best = s
		}
	}
	return l.scanRecords(ctx, p, max(best.base, logStart), best.end, func(_, rts int64) bool { return rts == best.maxTS })
}

// scanRecords reads the batches of [from, end) and returns the first record
// at or after from for which match is true.
func (l *Log) scanRecords(ctx context.Context, p *Partition, from, end int64, match func(off, ts int64) bool) (int64, int64, bool, error) {
	for off := from; off < end; {
		res, err := l.Read(ctx, p, off, 1<<20, true)
		if err != nil || res.Bytes == 0 {
			return -1, -1, false, err
		}
		batches, err := res.WholeBatches()
		if err != nil {
			return -1, -1, false, err
		}
		var found bool
		var fOff, fTS int64
		for _, raw := range batches {
			err := record.Timestamps(raw, func(o, ts int64) bool {
				if o >= off && o < end && match(o, ts) {
					found, fOff, fTS = true, o, ts
					return false
				}
				return true
			})
			if err != nil || found {
				return fOff, fTS, found, err
			}
			off = record.BaseOffset(raw) + int64(record.ReadHeader(raw).LastOffsetDelta) + 1
		}
	}
	return -1, -1, false, nil
}
