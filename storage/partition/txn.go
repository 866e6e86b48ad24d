package partition

import (
	"context"
	"fmt"
)

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
// answers it. CurrentTxnStartOffset is -1 without an open transaction.
type ProducerInfo struct {
	ProducerID            int64
	ProducerEpoch         int16
	LastSequence          int32
	LastTimestamp         int64
	CoordinatorEpoch      int32
	CurrentTxnStartOffset int64
}

// WriteMarker appends a commit or abort control batch for m.ProducerID to p
// and returns once it is durable in p's durability mode, like an acks=all
// Append.
func (l *Log) WriteMarker(ctx context.Context, p *Partition, m Marker) (offset int64, err error) {
	return 0, fmt.Errorf("%w: transaction markers are not supported", ErrStorage)
}

// LastStableOffset returns the first offset of p's oldest open transaction,
// else the high watermark: what read_committed consumers read up to.
func (p *Partition) LastStableOffset() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hw
}

// HasOpenTxn reports whether producer pid has a transaction open in p at
// epoch: its further batches then need no check with the coordinator.
func (p *Partition) HasOpenTxn(pid int64, epoch int16) bool {
	return false
}

// ReadCommitted is Read for read_committed consumers: it never returns a
// batch at or past the last stable offset, and it lists the aborted
// transactions overlapping the batches it returns.
func (l *Log) ReadCommitted(ctx context.Context, p *Partition, offset int64, maxBytes int, first bool) (FetchResult, error) {
	return l.Read(ctx, p, offset, maxBytes, first)
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
			LastTimestamp: st.LastTimeMs, CoordinatorEpoch: -1, CurrentTxnStartOffset: -1}
		if n := len(st.Batches); n > 0 {
			info.LastSequence = st.Batches[n-1].LastSeq
		}
		out = append(out, info)
	}
	return out
}
