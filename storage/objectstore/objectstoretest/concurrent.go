package objectstoretest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// testConcurrent: many goroutines put, get and range-read their own keys at
// once; each always reads back exactly what it last wrote.
func testConcurrent(t *testing.T, s objectstore.Store, prefix string) {
	const workers, rounds = 16, 8
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			key := fmt.Sprintf("%sworker%02d", prefix, w)
			for r := range rounds {
				if err := roundTrip(t, s, key, randomBytes(1000+100*r, uint64(w*rounds+r))); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// roundTrip puts data under key and reads it back whole and in part. It
// returns an error rather than failing, for use off the test goroutine.
func roundTrip(t *testing.T, s objectstore.Store, key string, data []byte) error {
	ctx := t.Context()
	if _, err := s.Put(ctx, key, data, objectstore.Condition{}); err != nil {
		return fmt.Errorf("Put(%q): %w", key, err)
	}
	got, err := s.Get(ctx, key)
	if err != nil || string(got) != string(data) {
		return fmt.Errorf("Get(%q) = %d bytes, %v; want the %d bytes just put", key, len(got), err, len(data))
	}
	part, err := s.GetRange(ctx, key, 10, 100)
	if err != nil || string(part) != string(data[10:110]) {
		return fmt.Errorf("GetRange(%q, 10, 100) = %d bytes, %v; want bytes 10-109 just put", key, len(part), err)
	}
	return nil
}
