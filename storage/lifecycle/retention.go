package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment-io/sediment/metadata"
)

// Retainer applies retention; it keeps nothing between passes. All fields
// but Page are required.
type Retainer struct {
	Meta *metadata.Store
	// GCGrace is how long a deleted segment's object stays readable.
	GCGrace time.Duration
	// Page is how many index entries a pass reads at a time when only the
	// oldest segments can expire (default 16).
	Page int
	// Deleted counts the segments retention removed.
	Deleted prometheus.Counter
	Logger  *slog.Logger
}

// defaultRetentionPage is the default of Retainer.Page.
const defaultRetentionPage = 16

// Pass deletes, for every partition, the oldest committed segments that
// retention.ms or retention.bytes (cleanup.policy=delete topics only) or
// the log start offset (DeleteRecords) puts out of the log, and raises the
// log start offset past them. Only whole segments go, as in Kafka; data
// not yet uploaded is never touched.
func (r *Retainer) Pass(ctx context.Context, parts []Partition) error {
	var errs []error
	for _, p := range parts {
		if err := r.retainPartition(ctx, p); err != nil && !metadata.IsConflict(err) {
			errs = append(errs, fmt.Errorf("%s/%d: %w", p.Topic, p.Index, err))
		}
	}
	return errors.Join(errs...)
}

func (r *Retainer) retainPartition(ctx context.Context, p Partition) error {
	logStart := p.LogStart()
	segs, n, err := r.expiring(ctx, p, logStart, time.Now())
	if err != nil || n == 0 {
		return err
	}
	newStart := max(logStart, segs[n-1].EndOffset)
	if err := r.Meta.DeleteSegments(ctx, p.TopicID, p.Index, segs[:n], newStart, r.GCGrace, p.Fence...); err != nil {
		return err
	}
	p.RaiseLogStart(newStart)
	r.Deleted.Add(float64(n))
	r.Logger.Info("retention deleted segments", "topic", p.Topic, "partition", p.Index,
		"segments", n, "log_start_offset", newStart)
	return nil
}

// expiring returns the oldest segments of p, at least those retention
// removes, and how many of them it removes (expiredSegments). Without
// retention.bytes, which needs the size of the whole log, it reads the
// index a page at a time from the start and stops at the first page with a
// segment that stays: a pass then reads one page per partition instead of
// the whole index (with 2,000 partitions and uploads every 250 ms the
// whole-index read was an eighth of the broker's CPU).
func (r *Retainer) expiring(ctx context.Context, p Partition, logStart int64, now time.Time) ([]metadata.Segment, int, error) {
	cfg := p.Retention
	if cfg.Bytes >= 0 && !cfg.Compact {
		segs, err := r.Meta.Segments(ctx, p.TopicID, p.Index, 0, 0)
		if err != nil {
			return nil, 0, err
		}
		return segs, expiredSegments(segs, logStart, cfg, now), nil
	}
	pageLen := r.Page
	if pageLen <= 0 {
		pageLen = defaultRetentionPage
	}
	var segs []metadata.Segment
	for from := int64(0); ; { // each page starts past the last: the index is finite
		page, err := r.Meta.Segments(ctx, p.TopicID, p.Index, from, pageLen)
		if err != nil {
			return nil, 0, err
		}
		segs = append(segs, page...)
		// Only a prefix of the oldest segments expires, so a count short
		// of what was read is the count for the whole index.
		n := expiredSegments(segs, logStart, cfg, now)
		if n < len(segs) || len(page) < pageLen {
			return segs, n, nil
		}
		from = page[len(page)-1].BaseOffset + 1
	}
}

// expiredSegments returns how many of the oldest segments retention
// removes: those wholly below the log start offset, then, for delete-policy
// topics, those whose newest record is older than retention.ms, then those
// beyond retention.bytes (oldest first, while the rest still reach it).
func expiredSegments(segs []metadata.Segment, logStart int64, cfg Retention, now time.Time) int {
	n := 0
	for n < len(segs) && segs[n].EndOffset <= logStart {
		n++
	}
	if cfg.Compact {
		return n
	}
	if cfg.Ms >= 0 {
		cutoff := now.UnixMilli() - cfg.Ms
		for n < len(segs) && segs[n].MaxTimestamp < cutoff {
			n++
		}
	}
	if cfg.Bytes >= 0 {
		var size int64
		for _, s := range segs[n:] {
			size += s.Len
		}
		for n < len(segs) && size-segs[n].Len >= cfg.Bytes {
			size -= segs[n].Len
			n++
		}
	}
	return n
}
