package protocol

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sediment-io/sediment/storage/partition"
	"github.com/sediment-io/sediment/storage/wal"
)

// TestFetchRacesUploadAndWALRelease: with a tail cache that holds nothing,
// small WAL segments, an upload every millisecond and reads of rotated WAL
// segments slowed down (coldWALFS), consumers fall behind several producers
// and read batches from WAL segments that the uploader releases while they
// read. Every answer is either records without an error or an error without
// records, every consumer reads every offset exactly once, in order, to the
// end, and no fetch fails: a read racing a WAL release retries from the
// object store.
func TestFetchRacesUploadAndWALRelease(t *testing.T) {
	t.Parallel()
	b := startBroker(t, withLogOptions(func(o *partition.Options) {
		o.TailCacheBytes, o.UploadInterval, o.WALSegmentBytes = 1, time.Millisecond, 4<<10
		o.WALFS = coldWALFS{FS: wal.OSFS{}, files: new(atomic.Int64)}
	}))
	b.createTopic("race", 1, nil)
	const producers, perProducer, consumers = 4, 300, 4
	var (
		failures = make(chan error, producers+consumers)
		quit     = make(chan struct{})
		quitOnce sync.Once
		wg       sync.WaitGroup
	)
	fail := func(err error) { // stops every producer and consumer
		failures <- err
		quitOnce.Do(func() { close(quit) })
	}
	now := time.Now().UnixMilli() // recent, or retention.ms deletes what is uploaded
	for p := range producers {
		pc := b.dial()
		wg.Add(1)
		go func() { // acks=all, so every batch is in the WAL before the next
			defer wg.Done()
			for i := range perProducer {
				select {
				case <-quit:
					return
				default:
				}
				batch := plainBatch(1, 200, now+int64(p*perProducer+i)).build(t)
				if r := pc.produce("race", 0, batch); r.ErrorCode != 0 {
					fail(fmt.Errorf("producer %d, batch %d: %s", p, i, errName(r.ErrorCode)))
					return
				}
			}
		}()
	}
	for range consumers {
		c := b.dial()
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := consumeRace(c, producers*perProducer, quit); err != nil {
				fail(err)
			}
		}()
	}
	wg.Wait() // before the cleanups close the connections
	close(failures)
	for err := range failures {
		t.Error(err)
	}
}

// consumeRace reads the race topic from offset 0 to end, polling without
// waiting, and returns the first answer that breaks the oracle, or a bound
// exceeded.
func consumeRace(c *rawClient, end int64, quit <-chan struct{}) error {
	var next int64
	var failed int
	for round := 0; next < end; round++ {
		select {
		case <-quit:
			return nil
		default:
		}
		if round > 500*int(end) {
			return fmt.Errorf("no progress: read up to %d of %d in %d fetches", next, end, round)
		}
		req := fetchReq(12, "race", [16]byte{}, 0, next)
		req.MinBytes, req.MaxWaitMillis = 0, 0 // a long poll would wait at the high watermark
		req.Topics[0].Partitions[0].PartitionMaxBytes = 1 << 20
		p := c.fetchOne(req)
		if p.ErrorCode != 0 {
			if len(p.RecordBatches) != 0 {
				return fmt.Errorf("fetch at %d: error %s with %d bytes of records", next, errName(p.ErrorCode), len(p.RecordBatches))
			}
			if failed++; failed > 100 {
				return fmt.Errorf("fetch at %d: error %s, %d times; a read racing a WAL release should retry from the object store", next, errName(p.ErrorCode), failed)
			}
			continue
		}
		for _, raw := range splitFetched(c.t, p.RecordBatches) {
			base := int64(binary.BigEndian.Uint64(raw))
			last := base + int64(binary.BigEndian.Uint32(raw[23:]))
			if base > next || last < next {
				return fmt.Errorf("fetch at %d returned the batch %d..%d", next, base, last)
			}
			next = last + 1
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d fetches failed; a read racing a WAL release should retry from the object store", failed)
	}
	return nil
}

// coldWALFS is a WAL filesystem whose reads of any file but the newest one
// opened sleep first, as if the pages of rotated segments had left the page
// cache. The uploader reads the batches it uploads from the newest segment
// at full speed, while a consumer that falls a segment behind reads slowly,
// so its reads overlap the releases of the segments it reads.
type coldWALFS struct {
	wal.FS
	files *atomic.Int64 // files opened so far; the newest has this number
}

// coldReadDelay is how long a read of a rotated WAL segment sleeps.
const coldReadDelay = 300 * time.Microsecond

func (fs coldWALFS) Create(name string) (wal.File, error) { return fs.wrap(fs.FS.Create(name)) }

func (fs coldWALFS) OpenFile(name string) (wal.File, error) { return fs.wrap(fs.FS.OpenFile(name)) }

func (fs coldWALFS) Open(name string) (wal.File, error) { return fs.wrap(fs.FS.Open(name)) }

func (fs coldWALFS) wrap(f wal.File, err error) (wal.File, error) {
	if err != nil {
		return nil, err
	}
	return coldWALFile{File: f, fs: fs, n: fs.files.Add(1)}, nil
}

// coldWALFile is one file of a coldWALFS, the n-th opened.
type coldWALFile struct {
	wal.File
	fs coldWALFS
	n  int64
}

func (f coldWALFile) ReadAt(p []byte, off int64) (int, error) {
	if f.n < f.fs.files.Load() {
		time.Sleep(coldReadDelay)
	}
	return f.File.ReadAt(p, off)
}
