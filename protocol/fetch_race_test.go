package protocol

import (
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sediment-io/sediment/storage/partition"
)

// TestFetchRacesUploadAndWALRelease: with a tail cache that holds nothing,
// small WAL segments and an upload every millisecond, a consumer fetches
// right behind a producer, so its reads of evicted batches from the WAL
// race with the uploads that release those WAL segments. Every answer is
// either records without an error or an error without records, and the
// consumer reads every offset exactly once, in order.
func TestFetchRacesUploadAndWALRelease(t *testing.T) {
	t.Parallel()
	b := startBroker(t, withLogOptions(func(o *partition.Options) {
		o.TailCacheBytes, o.UploadInterval, o.WALSegmentBytes = 1, time.Millisecond, 4<<10
	}))
	b.createTopic("race", 1, nil)
	const batches = 1500
	var producer sync.WaitGroup
	var produceErr error
	stop := make(chan struct{})
	pc := b.dial()
	now := time.Now().UnixMilli() // recent, or retention.ms deletes what is uploaded
	producer.Add(1)
	go func() { // acks=all, so every batch is in the WAL before the next
		defer producer.Done()
		for i := range batches {
			select {
			case <-stop: // the consumer failed
				return
			default:
			}
			if p := pc.produce("race", 0, plainBatch(1, 200, now+int64(i)).build(t)); p.ErrorCode != 0 {
				produceErr = fmt.Errorf("produce %d: %s", i, errName(p.ErrorCode))
				return
			}
		}
	}()
	defer func() { // before the cleanups close the connections
		close(stop)
		producer.Wait()
	}()
	c := b.dial()
	var next int64
	var errs int
	for round := 0; next < batches; round++ {
		if round > 50*batches {
			t.Fatalf("no progress: read up to %d of %d in %d fetches", next, batches, round)
		}
		req := fetchReq(12, "race", [16]byte{}, 0, next)
		req.MinBytes, req.MaxWaitMillis = 1, 5000 // at the high watermark, wait for the producer
		req.Topics[0].Partitions[0].PartitionMaxBytes = 64 << 10
		p := c.fetchOne(req)
		if p.ErrorCode != 0 {
			if len(p.RecordBatches) != 0 {
				t.Fatalf("fetch at %d: error %s with %d bytes of records", next, errName(p.ErrorCode), len(p.RecordBatches))
			}
			if errs++; errs > 100 {
				tp, _ := b.log.Topic("race")
				ls, hw := tp.Partition(0).Offsets()
				t.Fatalf("fetch at %d: error %s, %d times (log start %d, high watermark %d)", next, errName(p.ErrorCode), errs, ls, hw)
			}
			continue
		}
		for _, raw := range splitFetched(t, p.RecordBatches) {
			base := int64(binary.BigEndian.Uint64(raw))
			last := base + int64(binary.BigEndian.Uint32(raw[23:]))
			if base > next || last < next {
				t.Fatalf("fetch at %d returned the batch %d..%d", next, base, last)
			}
			next = last + 1
		}
	}
	producer.Wait()
	if produceErr != nil {
		t.Fatal(produceErr)
	}
	if errs > 0 {
		t.Errorf("%d fetches failed; a read racing a WAL release should retry from the object store", errs)
	}
}
