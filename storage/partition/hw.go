package partition

// advanceHW is advanceHWLocked for a caller not holding p.mu.
func (p *Partition) advanceHW(end int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.advanceHWLocked(end)
}

// advanceHWLocked raises the high watermark to end (capped at the next
// offset) and wakes every fetch and Wait registered with Notify. It is the
// only code that moves the high watermark after a partition is built; its
// callers are the three ways a batch becomes durable:
//
//   - WAL durability: the fsync that covers the batch's frame (Wait, for
//     the append that waits on it; the durable notifier, for those nobody
//     waits on: acks=0 producers);
//   - object durability, and any batch once uploaded: the metadata commit
//     of the segment holding it (markUploaded raises it to committed);
//   - recovery: a batch replayed from the WAL, which recovery read back
//     from the synced files (replayBatch).
//
// Invariants, which every caller keeps:
//
//   - the high watermark never falls, and logStart <= hw <= next;
//   - every offset below end is durable under the durability mode when a
//     caller passes end: the WAL is one ordered log and a partition
//     appends its frames in offset order under p.mu, so an fsync covering
//     a batch's frame covers the partition's earlier batches too, and
//     commits of a partition's segments apply in offset order;
//   - end is a batch boundary (the end of a batch, or committed), so a
//     fetch never sees part of a batch.
func (p *Partition) advanceHWLocked(end int64) {
	if end > p.next {
		end = p.next
	}
	if end <= p.hw {
		return
	}
	p.hw = end
	p.producers.settle(end)
	p.wakeLocked()
}
