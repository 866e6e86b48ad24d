package table

import (
	"github.com/sediment-io/sediment/storage/partition"
	"github.com/sediment-io/sediment/storage/record"
)

// committedBatch says whether the converter takes the stored batch raw,
// as a read_committed consumer would: not a transaction marker (a control
// batch), nor a batch of one of the aborted transactions of its read
// (sorted by first offset, as ReadCommitted answers them). A batch belongs
// to an aborted transaction when its producer is the transaction's and it
// lies between the transaction's first offset and its abort marker.
func committedBatch(raw []byte, aborted []partition.AbortedTxn) bool {
	b := record.ReadHeader(raw)
	if b.Control() {
		return false
	}
	if !b.Transactional() {
		return true
	}
	base := record.BaseOffset(raw)
	for _, a := range aborted {
		if a.FirstOffset > base {
			break
		}
		if a.ProducerID == b.ProducerID && base < a.LastOffset {
			return false
		}
	}
	return true
}
