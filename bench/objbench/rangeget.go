package main

import (
	"context"
	"time"

	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/storeurl"
)

// rangeBlock is the size of each ranged GET, the broker's block size.
const rangeBlock = 4 << 20

// rangedGet reads every object of the store at storeURL through Sediment's
// own backend, in 4 MiB ranged GETs one after another: the object-store
// path of a catch-up read without the broker and the Kafka client.
func rangedGet(ctx context.Context, storeURL string) (float64, error) {
	s, err := storeurl.Open(ctx, storeURL, storeurl.Options{})
	if err != nil {
		return 0, err
	}
	defer s.Close()
	var objects []objectstore.Info
	err = s.List(ctx, "", "", func(info objectstore.Info) bool {
		objects = append(objects, info)
		return true
	})
	if err != nil {
		return 0, err
	}
	start := time.Now()
	var total int64
	for _, o := range objects {
		for off := int64(0); off < o.Size; off += rangeBlock {
			data, err := s.GetRange(ctx, o.Key, off, rangeBlock)
			if err != nil {
				return 0, err
			}
			total += int64(len(data))
		}
	}
	return float64(total) / mb / time.Since(start).Seconds(), nil
}
