package partition

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment-io/sediment/storage/record"
)

// A partition's side of Kafka transactions, as Kafka's ProducerStateManager
// and transaction index keep it:
//
//   - a transactional batch opens its producer's transaction at its base
//     offset (the open-transaction table, producers.open);
//   - a marker (WriteMarker) is a control batch appended like any other
//     batch (offset, WAL, upload); it ends the transaction, and an abort
//     adds (producer, first offset, marker offset) to the aborted index;
//   - the last stable offset (LSO) is the first offset of the oldest
//     transaction still open, or ended by a marker not yet under the high
//     watermark, else the high watermark: read_committed consumers read up
//     to it, skipping the aborted transactions' batches.
//
// Both tables are persisted with the producer state: each segment's
// producer delta, written in the same metadata transaction (same owner
// fence) as the segment, carries its producers' open transaction and the
// transactions aborted in it (metadata.ProducerState). A restart rebuilds
// them from metadata and then from the WAL's batches since the last
// commit; a new owner from metadata alone. Compaction keeps every batch's
// offset, so the index stays right; retention drops the aborted
// transactions that ended before the log start offset.

// Marker is a transaction coordinator's decision for one producer's
// transaction in one partition: a commit or abort control batch.
type Marker struct {
	ProducerID       int64
	ProducerEpoch    int16
	Commit           bool
	CoordinatorEpoch int32
}

// AbortedTxn is one aborted transaction of a partition: the producer's
// batches in [FirstOffset, LastOffset] are to be dropped by read_committed
// consumers. LastOffset is the offset of the abort marker.
type AbortedTxn struct {
	ProducerID  int64
	FirstOffset int64
	LastOffset  int64
}

// ProducerInfo is one producer's state in a partition, as DescribeProducers
// answers it. CoordinatorEpoch is -1 before the producer's first marker,
// CurrentTxnStartOffset -1 without an open transaction.
type ProducerInfo struct {
	ProducerID            int64
	ProducerEpoch         int16
	LastSequence          int32
	LastTimestamp         int64
	CoordinatorEpoch      int32
	CurrentTxnStartOffset int64
}

// WriteMarker appends a commit or abort control batch for m.ProducerID to p
// and returns once it is durable in p's durability mode (like an acks=all
// Append). A marker with an epoch older than the producer's is refused with
// kerr.InvalidProducerEpoch, one from an older coordinator epoch than the
// last marker's with kerr.TransactionCoordinatorFenced. A marker with no
// open transaction of the producer is still written, as Kafka does, and
// changes only the producer's epochs: the coordinator may repeat markers.
// Not owning p fails as Append does.
func (l *Log) WriteMarker(ctx context.Context, p *Partition, m Marker) (offset int64, err error) {
	if l.closed.Load() {
		return 0, ErrClosed
	}
	if err := l.checkFailed(); err != nil {
		return 0, err
	}
	if err := l.CheckLeader(p); err != nil {
		return 0, err
	}
	now := l.now().UnixMilli()
	raw := record.MarkerBatch(m.ProducerID, m.ProducerEpoch,
		record.ControlMarker{Commit: m.Commit, CoordinatorEpoch: m.CoordinatorEpoch}, now)
	res, err := l.appendMarker(p, raw, m, now)
	if err != nil {
		return 0, err
	}
	if err := l.Wait(ctx, res); err != nil {
		return 0, err
	}
	return res.BaseOffset, nil
}

// appendMarker appends marker batch raw under the locks an Append takes. A
// marker does not wait for room (waitForRoom): it is small, and it is
// what lets read_committed consumers move on.
func (l *Log) appendMarker(p *Partition, raw []byte, m Marker, nowMs int64) (AppendResult, error) {
	var victims []*batchRef
	defer func() { evictAll(victims) }() // runs after the unlocks below
	l.appendGate.RLock()
	defer l.appendGate.RUnlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.deleted {
		return AppendResult{}, ErrUnknownPartition
	}
	if err := l.leadsLocked(p); err != nil {
		return AppendResult{}, err
	}
	if p.releasing {
		return AppendResult{}, fmt.Errorf("%w: %s/%d is being handed over", ErrNotLeader, p.topic.Name, p.index)
	}
	if p.offline {
		return AppendResult{}, fmt.Errorf("%w: partition %s/%d is reloading after a failed commit", ErrStorage, p.topic.Name, p.index)
	}
	if err := p.producers.checkMarker(m); err != nil {
		return AppendResult{}, fmt.Errorf("%s/%d: %w", p.topic.Name, p.index, err)
	}
	b := record.ReadHeader(raw)
	res, victims, err := l.appendLocked(p, &b, AppendResult{LogAppendTime: -1, LogStartOffset: p.logStart}, nowMs)
	return res, err
}

// lsoLocked is the last stable offset.
func (p *Partition) lsoLocked() int64 {
	return max(p.logStart, p.producers.firstUnstable(p.hw))
}

// LastStableOffset returns the first offset of p's oldest open transaction,
// else the high watermark: what read_committed consumers read up to.
func (p *Partition) LastStableOffset() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lsoLocked()
}

// HasOpenTxn reports whether producer pid has a transaction open in p at
// epoch: its further batches then need no check with the coordinator.
func (p *Partition) HasOpenTxn(pid int64, epoch int16) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, open := p.producers.open[pid]
	st := p.producers.m[pid]
	return open && st != nil && st.Epoch == epoch
}

// ReadCommitted is Read for read_committed consumers: it never returns a
// batch at or past the last stable offset, and it lists the aborted
// transactions overlapping the batches it returns, sorted by first offset.
// Long polls registered with Notify wake when the last stable offset
// moves: it moves only with the high watermark (a marker counts once it
// is under it).
func (l *Log) ReadCommitted(ctx context.Context, p *Partition, offset int64, maxBytes int, first bool) (FetchResult, error) {
	res, err := l.readIsolated(ctx, p, offset, maxBytes, first, true)
	if err != nil || res.next <= offset {
		return res, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.producers.pruneAborted(p.logStart)
	res.Aborted = p.producers.abortedIn(offset, res.next-1)
	return res, nil
}

// Producers returns the state of every producer p knows, sorted by
// producer id, for DescribeProducers.
func (p *Partition) Producers() []ProducerInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	list := p.producers.list()
	out := make([]ProducerInfo, 0, len(list))
	for _, st := range list {
		info := ProducerInfo{ProducerID: st.ID, ProducerEpoch: st.Epoch, LastSequence: -1,
			LastTimestamp: st.LastTimeMs, CoordinatorEpoch: st.CoordEpoch, CurrentTxnStartOffset: -1}
		if n := len(st.Batches); n > 0 {
			info.LastSequence = st.Batches[n-1].LastSeq
		}
		if st.TxnOpen {
			info.CurrentTxnStartOffset = st.TxnFirst
		}
		out = append(out, info)
	}
	return out
}

// txnCollector exports the transaction gauges, both from one pass over the
// partitions per scrape. They aggregate over partitions: a last stable
// offset lag per partition would be one series per partition of the
// cluster, too many to scrape; the greatest lag shows that a transaction
// is stuck, and DescribeProducers finds which.
type txnCollector struct{ l *Log }

var (
	openTxnsDesc = prometheus.NewDesc("sediment_open_transactions",
		"Transactions open in the partitions this broker owns (one per producer and partition).", nil, nil)
	lsoLagDesc = prometheus.NewDesc("sediment_lso_lag_max_offsets",
		"Greatest high watermark minus last stable offset over the partitions this broker owns.", nil, nil)
)

// Describe implements prometheus.Collector.
func (c txnCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- openTxnsDesc
	ch <- lsoLagDesc
}

// Collect implements prometheus.Collector.
func (c txnCollector) Collect(ch chan<- prometheus.Metric) {
	open, lag := c.l.txnGauges()
	ch <- prometheus.MustNewConstMetric(openTxnsDesc, prometheus.GaugeValue, float64(open))
	ch <- prometheus.MustNewConstMetric(lsoLagDesc, prometheus.GaugeValue, float64(lag))
}

// txnGauges returns the open transactions of the partitions this log owns
// and the greatest distance, in offsets, between a partition's high
// watermark and its last stable offset.
func (l *Log) txnGauges() (open int, maxLag int64) {
	for _, t := range l.Topics() {
		for _, p := range t.Partitions() {
			p.mu.Lock()
			if p.owned {
				open += len(p.producers.open)
				maxLag = max(maxLag, p.hw-p.lsoLocked())
			}
			p.mu.Unlock()
		}
	}
	return open, maxLag
}
